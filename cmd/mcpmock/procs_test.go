package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestForwarderProcs(t *testing.T) {
	for _, c := range []struct {
		current int
		env     string
		want    int
	}{
		{2, "", 4},
		{1, "", 3},
		{16, "", 18},
		{2, "2", 2}, // the user's GOMAXPROCS wins
		{3, "3", 3},
	} {
		if got := forwarderProcs(c.current, c.env); got != c.want {
			t.Errorf("forwarderProcs(%d, %q) = %d, want %d", c.current, c.env, got, c.want)
		}
	}
}

// A record session sets the count from the start value, so a second one
// (tests run many in one process) does not raise it again.
func TestRoomForForwardersIsIdempotent(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	roomForForwarders()
	first := runtime.GOMAXPROCS(0)
	roomForForwarders()
	if got := runtime.GOMAXPROCS(0); got != first || got != startProcs+2 {
		t.Errorf("GOMAXPROCS after two calls = %d (after one %d), want %d", got, first, startProcs+2)
	}
}

// A tap runs the collector at GOGC=200 unless GOGC is set, and puts back
// what was when it ends.
func TestLessCollection(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	t.Setenv("GOGC", "")
	restore := lessCollection()
	if got := debug.SetGCPercent(tapGCPercent); got != tapGCPercent {
		t.Errorf("GOGC unset: the tap's GC percent is %d, want %d", got, tapGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the tap: %d, want 100 back", got)
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	restore = lessCollection()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GOGC=50: the tap's GC percent is %d, want the user's 50", got)
	}
	restore()
}
