package recorder

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
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
