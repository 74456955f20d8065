package main

import (
	"os"
	"testing"
	"time"
)

// TestStolen reads the steal time of /proc/stat's cpu line (its eighth
// number) against the total of the first eight (200 of 1,200 ticks between
// the two readings here), and says so in the header.
func TestStolen(t *testing.T) {
	from := parseCPUTimes([]byte("cpu  1000 10 200 8000 5 0 20 100 0 0\ncpu0 500 5 100 4000 2 0 10 50 0 0\n"))
	if from != (cpuTimes{total: 9335, steal: 100}) {
		t.Fatalf("parse: %+v", from)
	}
	to := parseCPUTimes([]byte("cpu  1600 10 300 8300 5 0 20 300 40 0\n"))
	if got, want := stolen(from, to), "16.7% of the CPU time stolen by the host during the run"; got != want {
		t.Errorf("stolen: %q, want %q", got, want)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu a b c d e f g h i"} {
		if got := parseCPUTimes([]byte(bad)); got != (cpuTimes{}) {
			t.Errorf("parse %q: %+v, want nothing", bad, got)
		}
	}
	if got := stolen(cpuTimes{}, to); got != "CPU stolen by the host unknown" {
		t.Errorf("without a first reading: %q", got)
	}
}

// TestProcCPUNanoseconds: the growth group reads a process's CPU time to
// the nanosecond (schedstat), not in the 10 ms ticks of /proc/PID/stat,
// whose steps moved a ratio by 0.1: the first change seen while this
// process spins is well under a tick.
func TestProcCPUNanoseconds(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc: the growth group needs Linux")
	}
	pid := os.Getpid()
	before, err := procCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	var step time.Duration
	for deadline := time.Now().Add(10 * time.Second); step == 0 && time.Now().Before(deadline); {
		now, err := procCPU(pid)
		if err != nil {
			t.Fatal(err)
		}
		step = now - before
	}
	if step <= 0 || step >= 10*time.Millisecond {
		t.Errorf("the first change of the CPU time seen is %v, want less than a 10 ms tick", step)
	}
}
