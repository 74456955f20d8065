package main

import (
	"runtime"
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
