//go:build !linux

package grow

import "unsafe"

// populate does nothing where there is no MADV_POPULATE_WRITE.
func populate(unsafe.Pointer, uintptr) {}
