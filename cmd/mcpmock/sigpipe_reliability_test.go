package main

import (
	"time"

	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestRecordClientClosesOutput: the client closes the pipe it reads
// mcpmock's output from (a client exiting, a host closing its end first),
// then the server answers. Writing that answer fails with EPIPE; it must not
// kill mcpmock with SIGPIPE before the cassette is saved: the call and its
// answer are recorded and mcpmock exits with a status of its own.
func TestRecordClientClosesOutput(t *testing.T) {
	path := tempCassette(t)
	p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.stdout.Close()
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":200}}}`)
	// The answer comes 200 ms later and finds the pipe closed; then the
	// client's input ends too.
	waitFor(t, func() bool {
		c, err := cassettes.Load(path)
		return err == nil && len(c.Interactions) >= 2 && c.Interactions[len(c.Interactions)-1].Response != nil
	})
	p.stdin.Close()
	if status := p.wait(t); status < 0 {
		t.Errorf("mcpmock was killed by a signal (SIGPIPE?); stderr:\n%s", p.stderr)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Interactions[len(c.Interactions)-1]
	if last.Request == nil || last.Response == nil {
		t.Fatalf("the last interaction is not the answered call: %+v", last)
	}
}

// waitFor polls cond until it holds, failing after 20 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not hold within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
