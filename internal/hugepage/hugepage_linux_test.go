package hugepage

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// anonHuge is the process's memory backed by transparent huge pages, in
// bytes (/proc/self/smaps_rollup).
func anonHuge(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no /proc/self/smaps_rollup to read huge pages from: %v", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("AnonHugePages line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatal("smaps_rollup has no AnonHugePages line")
	return 0
}

func TestBack(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("this kernel gives no transparent huge pages (%q, %v): Back can only leave memory as it is", mode, err)
	}
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i)
	}
	before := anonHuge(t)
	backed := Back(MinBytes)
	after := anonHuge(t)
	if backed < 32<<20 {
		t.Errorf("Back put %d bytes in huge pages, want at least 32 MiB of a 64 MiB slice", backed)
	}
	if after-before < 32<<20 {
		t.Errorf("huge pages %d → %d bytes after Back: want at least 32 MiB more", before, after)
	}
	for i := range data {
		if data[i] != byte(i) {
			t.Fatalf("byte %d changed to %d by the collapse", i, data[i])
		}
	}
}
