package hugepage

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The advice that the syscall package does not name.
const (
	madvHugepage = 14 // MADV_HUGEPAGE: back this range with huge pages
	madvCollapse = 25 // MADV_COLLAPSE (Linux 6.1): now, for what it holds
	hugeSize     = 2 << 20
)

// Back advises huge pages for each anonymous private read-write mapping of
// the process (Go's heap among them) of at least min bytes, and collapses
// what they hold into huge pages at once rather than in the background; it
// returns the bytes now in huge pages. It is best effort: a kernel without
// transparent huge pages, or set to "never", or older than Linux 6.1,
// refuses the advice or the collapse, and the memory stays as it was (or
// is collapsed later by khugepaged). Call it once what the pages hold is in
// place.
func Back(min uintptr) uintptr {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	var backed uintptr
	for line := range strings.Lines(string(maps)) {
		// start-end perms offset dev inode, and no path: anonymous.
		f := strings.Fields(line)
		if len(f) != 5 || f[1] != "rw-p" || f[4] != "0" {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		start := (uintptr(a) + hugeSize - 1) &^ (hugeSize - 1)
		end := uintptr(b) &^ (hugeSize - 1)
		if end <= start || end-start < min {
			continue
		}
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvHugepage); e != 0 {
			continue
		}
		// One huge page at a time: over a range, the kernel stops at the
		// first that it cannot collapse (one that holds no page yet, which
		// it refuses), and leaves the rest to khugepaged, which takes
		// minutes.
		for p := start; p < end; p += hugeSize {
			if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, p, hugeSize, madvCollapse); e == 0 {
				backed += hugeSize
			}
		}
	}
	return backed
}
