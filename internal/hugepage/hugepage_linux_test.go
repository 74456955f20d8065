package hugepage

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// hugeIn is how many bytes of the n at p are in transparent huge pages:
// the AnonHugePages of the mappings that p to p+n overlaps, at most n
// (/proc/self/smaps).
func hugeIn(t *testing.T, p, n uintptr) uintptr {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps to read huge pages from: %v", err)
	}
	var huge uintptr
	overlaps := false
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			overlaps = err1 == nil && err2 == nil && uintptr(a) < p+n && p < uintptr(b)
			continue
		}
		if overlaps && len(f) == 3 && f[0] == "AnonHugePages:" {
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("AnonHugePages line %q: %v", line, err)
			}
			huge += uintptr(kb) << 10
		}
	}
	return min(huge, n)
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
	backed := Back(MinBytes)
	// The slice's own pages, after Back: where an earlier run in this
	// process (-count) made its mappings huge already, Back finds less to
	// do, but the slice must be in huge pages all the same.
	if got := hugeIn(t, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data))); got < 32<<20 {
		t.Errorf("%d bytes of a 64 MiB slice in huge pages after Back (which put %d in them), want at least 32 MiB", got, backed)
	}
	for i := range data {
		if data[i] != byte(i) {
			t.Fatalf("byte %d changed to %d by the collapse", i, data[i])
		}
	}
}
