package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

// waitExited waits until process pid, a child, has exited, and leaves it
// unreaped: its /proc/PID/stat then holds the CPU time of all its threads
// to the end (waitid with WNOWAIT; exec.Cmd's Wait reaps it after).
func waitExited(pid int) error {
	var info [128]byte // a siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return fmt.Errorf("wait for process %d: %w", pid, errno)
	}
}
