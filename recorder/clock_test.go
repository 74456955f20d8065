package recorder

import (
	"bufio"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestClockTimesTheSaves: a save is timed by Options.Now, not by the wall
// clock, so that the saver's pacing (savePause) follows an injected clock.
// The fake clock moves one step at each reading; a save reads it when it
// starts and when it ends, under saveMu, so it takes exactly one step.
func TestClockTimesTheSaves(t *testing.T) {
	const step = 7 * time.Second
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ticks atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * step) }
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), &Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	at := start.Add(time.Hour)
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), at)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), at.Add(time.Millisecond))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec.saveMu.Lock()
	got := rec.saveCost
	rec.saveMu.Unlock()
	if got != step {
		t.Errorf("the last save took %v by the clock, want one step of the injected clock (%v)", got, step)
	}
}

// TestTheTapTakesTheInjectedClock: the stdio tap times the messages it
// records by Options.Now (it read the wall clock), so that a recording with
// timing kept is as the clock says.
func TestTheTapTakesTheInjectedClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ticks atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Hour) }
	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, &Options{Now: now, Save: cassettes.SaveOptions{KeepTiming: true}})
	if err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(testpeer.GoSDK)
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		io.WriteString(inW, in)
		bufio.NewReader(outR).ReadString('\n') // the answer, then the client leaves
		inW.Close()
		io.Copy(io.Discard, outR)
	}()
	if _, err := Stdio(testCtx(t), argv, inR, outW, io.Discard, rec, &StdioOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in0 := c.Interactions[0]
	for _, at := range []cassettes.Millis{in0.AtMs, in0.Response.AtMs} {
		if h := float64(at) / 3.6e6; h < 1 || h != float64(int(h)) {
			t.Errorf("a message recorded at %vms from the start: not a whole number of the clock's hours", float64(at))
		}
	}
}
