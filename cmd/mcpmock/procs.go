package main

import (
	"os"
	"runtime"
)

// roomForForwarders gives the Go scheduler one P more than it has for each
// of the stdio tap's two forwarding goroutines. Each sits in a blocking
// read of a pipe (recorder/stdio.go), and a goroutine in a system call
// keeps its P until the runtime's monitor takes it back, 20 µs or more
// later. With as many Ps as CPUs (two on the machines the benchmark ran
// on), the two reads often hold both, and the forwarder whose read has
// returned, or the recorder, waits for the monitor to hand one over.
//
// Measured with the stdio benchmark against the bare relay, interleaved,
// 2,000 calls a round, as the median of the per-round ratios to the same
// build with GOMAXPROCS at the CPU count: 4 Ps gave 1.006 to 1.026 in four
// runs of 24 to 40 rounds, and was faster in 78 rounds of 130; 3 and 8 Ps
// gave 1.028 and 1.011 in one run of 40 rounds. A small gain, but it has
// the same sign in every run.
//
// GOMAXPROCS set in the environment wins, and so does a limit lower than
// the CPU count (a container's), which the runtime already chose: it is
// raised by two like any other.
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
