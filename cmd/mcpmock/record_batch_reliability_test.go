package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// bigBatch is the size of the batch of TestRecordBigBatch: the size that
// DESIGN.md's durability promise names.
const bigBatch = 100_000

// batchOfPings is a 2025-03-26 JSON-RPC batch of n pings, ids 1 to n.
func batchOfPings(n int) []byte {
	b := make([]byte, 0, n*48)
	b = append(b, '[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"method":"ping"}`...)
	}
	return append(b, ']', '\n')
}

// killAfter is how long after the last answer TestRecordBigBatch kills the
// tap: a bit over the second of the promise.
const killAfter = 1200 * time.Millisecond

// waitForPings waits until the cassette at path holds n answered pings,
// for at most two minutes.
func waitForPings(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for answeredPings(path) != n {
		if time.Now().After(deadline) {
			t.Fatalf("the cassette did not hold the %d answered pings within two minutes (it holds %d)", n, answeredPings(path))
		}
		<-tick.C
	}
}

// answeredPings counts the pings of the cassette at path that have a
// response; -1 when the file does not load (yet).
func answeredPings(path string) int {
	c, err := cassettes.Load(path)
	if err != nil {
		return -1
	}
	n := 0
	for _, in := range c.Interactions {
		if in.Response != nil && bytes.Contains(in.Request, []byte(`"ping"`)) {
			n++
		}
	}
	return n
}

// TestRecordBigBatch sends a batch of 100,000 requests through the stdio
// tap to a go-sdk server (which answers a 2025-03-26 batch as one batch) and
// checks DESIGN.md's durability promise for it: killed with SIGKILL a bit
// over a second after the last answer was forwarded, the tap leaves a
// cassette holding every answered call; ended with SIGTERM, it saves them
// all and exits in time.
//
// The recorder once deleted each answered request from an ordered slice of
// the pending ones, a cost quadratic in the batch (45 s for this one, under
// the lock that saves need): the SIGKILL lost most of the calls, and the
// SIGTERM did not end within 20 s.
func TestRecordBigBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("a batch of 100,000 calls: not in -short")
	}
	for _, tt := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGKILL", syscall.SIGKILL},
		{"SIGTERM", syscall.SIGTERM},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tempCassette(t)
			p := start(t, append([]string{"record", "-c", path, "--quiet", "--"}, peerCommand(testpeer.GoSDK)...)...)
			p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			p.recv(t)
			p.send(t, initialized)
			if _, err := p.stdin.Write(batchOfPings(bigBatch)); err != nil {
				t.Fatal(err)
			}
			answered := readBatchAnswers(t, p, bigBatch)
			lastAnswer := time.Now()
			switch {
			case tt.sig != syscall.SIGKILL:
			case raceEnabled:
				// The race detector makes the tap several times slower
				// than the binary that the promise is about: wait for the
				// save, then kill.
				waitForPings(t, path, answered)
			default:
				// The promise is about time: what completed more than a
				// second before the kill is in the file.
				time.Sleep(time.Until(lastAnswer.Add(killAfter)))
			}
			p.cmd.Process.Signal(tt.sig)
			status := p.wait(t)
			if tt.sig == syscall.SIGTERM && status == -1 {
				t.Fatalf("mcpmock did not exit after SIGTERM")
			}
			if got := answeredPings(path); got != answered {
				t.Errorf("after %v %v after the last answer, the cassette holds %d answered pings, want %d",
					tt.name, time.Since(lastAnswer).Round(time.Millisecond), got, answered)
			}
		})
	}
}

// readBatchAnswers reads mcpmock's stdout until n answers (in batches or
// alone) have come, and returns how many there were.
func readBatchAnswers(t *testing.T, p *proc, n int) int {
	t.Helper()
	got := 0
	deadline := time.AfterFunc(2*time.Minute, func() { p.cmd.Process.Kill() })
	defer deadline.Stop()
	for got < n {
		line, err := p.lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading mcpmock's stdout after %d answers: %v", got, err)
		}
		var many []json.RawMessage
		if json.Unmarshal(line, &many) == nil {
			got += len(many)
			continue
		}
		var one map[string]any
		if err := json.Unmarshal(line, &one); err != nil {
			t.Fatalf("mcpmock wrote a line that is not JSON: %.200q", line)
		}
		got++
	}
	return got
}
