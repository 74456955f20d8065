package main

import (
	"runtime/debug"
	"testing"
)

// TestLimitMemory checks the soft memory limit a replay sets: 2 × the
// cassette's size + 30 MiB (at least 1.5 × the heap in use), and none when
// GOMEMLIMIT is set.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	t.Setenv("GOMEMLIMIT", "")
	const size = 70 << 20
	got := limitMemory(size)
	if want := int64(2*size + 30<<20); got < want {
		t.Errorf("limit %d, want at least %d", got, want)
	}
	if now := debug.SetMemoryLimit(-1); now != got {
		t.Errorf("the runtime's limit is %d, limitMemory said %d", now, got)
	}

	debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "500MiB")
	if got := limitMemory(size); got != 0 {
		t.Errorf("with GOMEMLIMIT set, limitMemory set %d", got)
	}
	if now := debug.SetMemoryLimit(-1); now != before {
		t.Errorf("with GOMEMLIMIT set, the runtime's limit changed to %d", now)
	}
}
