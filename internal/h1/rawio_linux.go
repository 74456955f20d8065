package h1

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a socket with raw system calls, under the
// runtime's network poller as net.Conn's Read and Write are. A system call
// made through the syscall package tells the scheduler, and the first one
// after the process was idle wakes Go's monitor thread (sysmon), which then
// polls every 20 µs until the process is idle again, and takes the
// processor away from a write that lasts: a request answered between two
// idle spells paid about two of sysmon's wake-ups and a hand-off of the
// processor between two threads. A read or a write of a non-blocking
// socket never blocks, so it need not tell the scheduler.
type rawIO struct {
	rc syscall.RawConn
}

// newRawIO returns the raw reads and writes of c, or nil where c has no
// socket.
func newRawIO(c net.Conn) io.ReadWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawIO{rc: rc}
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n := 0
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until the socket is readable
			case 0:
				n = int(m)
			default:
				errno = e
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *rawIO) Write(p []byte) (int, error) {
	n := 0
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until the socket has room
			case 0:
				n += int(m)
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}
