//go:build unix

package cassettefile

import (
	"syscall"
)

// openNonblock opens a named pipe without waiting for a writer (the file
// is then refused, as it is not a regular file); on a regular file it
// changes nothing.
const openNonblock = syscall.O_NONBLOCK
