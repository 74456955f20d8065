//go:build !linux

package hugepage

// Back does nothing but on Linux.
func Back(min uintptr) uintptr { return 0 }
