package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// roomForForwarders gives the Go scheduler two Ps more than it has CPUs
// while a stdio server is tapped. The tap forwards each direction in a
// goroutine of its own (recorder/stdio.go); the one that forwards the
// client's lines sits in a blocking read of the tap's stdin (a pipe the
// client made, in blocking mode), and a goroutine in a system call keeps
// its P until the runtime's monitor takes it back, 20 µs or more later.
// The other forwarder and the recorder then often wait for a P on a
// two-core machine.
//
// Measured with the stdio benchmark against the bare relay, interleaved,
// 2,000 calls a round, as the median of the per-round ratios. With the
// server's pipes in blocking mode, as they were then, 4 Ps gave 1.006 to
// 1.026 times the calls/s of 2 in four runs of 24 to 40 rounds (faster in
// 78 rounds of 130), and 3 and 8 Ps 1.028 and 1.011 (40 rounds). With the
// server's pipes under the poller, as they are now, 4 Ps measured 1.048 of
// the relay and 2 Ps 0.950 in the same 30 rounds.
//
// GOMAXPROCS set in the environment wins, and so does a limit lower than
// the CPU count (a container's), which the runtime already chose: it is
// raised by two like any other. mcpmock replay keeps the default: 3 or 4
// Ps made it about 8% slower.
//
// It sets the count from the one the process started with, so that calling
// it again (the tests run many records in one process) changes nothing.
func roomForForwarders() {
	runtime.GOMAXPROCS(forwarderProcs(startProcs, os.Getenv("GOMAXPROCS")))
}

// startProcs is the GOMAXPROCS the runtime chose at start.
var startProcs = runtime.GOMAXPROCS(0)

// forwarderProcs is the GOMAXPROCS for a stdio tap, from the current one
// and the GOMAXPROCS environment variable.
func forwarderProcs(current int, env string) int {
	if env != "" {
		return current
	}
	return current + 2
}

// lessCollection lets a tap's heap grow to three times what is live before
// the collector runs (GOGC=200 instead of Go's 100), unless the GOGC
// environment variable says otherwise; the returned function puts back
// what was. What a tap keeps live is small and bounded (the latest
// interactions, the early encodings until the next save: a few MB), while
// everything it forwards is copied, parsed and encoded once and dropped,
// so at the default the collector runs every few MB of that and costs a
// sixth of the recording work. Measured with the recording work of a
// tools/call (go test -run '^$' -bench RecordWork -benchtime 30000x
// ./recorder, five alternated runs, CPU time a call): GOGC=100 31.0–37.4
// (median 34.2) µs, 200 27.2–32.0 (28.6) µs, 400 25.9–30.3 (28.4) µs; 200
// has the gain for the least memory.
func lessCollection() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	was := debug.SetGCPercent(tapGCPercent)
	return func() { debug.SetGCPercent(was) }
}

// tapGCPercent is the GOGC of a tap (lessCollection).
const tapGCPercent = 200
