package recorder

import (
	"os"
	"syscall"
)

// blockingPipe returns a pipe whose ends are in blocking mode and closed
// on exec: the goroutine that forwards a line reads it straight from the
// kernel, with no poller in between.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
