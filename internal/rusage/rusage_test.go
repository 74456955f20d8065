package rusage

import (
	"runtime"
	"testing"
)

func TestSelfCountsCPU(t *testing.T) {
	before, ok := Self()
	if !ok {
		t.Skipf("no getrusage on %s", runtime.GOOS)
	}
	// Spin until the process has used a measurable amount of CPU.
	x := 0
	for i := 0; ; i++ {
		x += i * i
		if i%1_000_000 == 0 {
			now, _ := Self()
			if now.CPU() > before.CPU() {
				break
			}
		}
	}
	_ = x
	after, _ := Self()
	if after.CPU() <= before.CPU() || after.User < before.User {
		t.Fatalf("CPU time went from %v to %v", before, after)
	}
}
