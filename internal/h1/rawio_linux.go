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
	// The call in progress, for the functions that RawConn calls, which are
	// made once (a closure a call would allocate a call). A connection's
	// reads come one at a time, and so do its writes.
	rp, wp          []byte
	rn, wn          int
	rerrno, werrno  syscall.Errno
	readFn, writeFn func(fd uintptr) bool
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
	r := &rawIO{rc: rc}
	r.readFn, r.writeFn = r.read, r.write
	return r
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerrno = p, 0, 0
	err := r.rc.Read(r.readFn)
	n, errno := r.rn, r.rerrno
	r.rp = nil
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

// read is one try of Read on the socket; false: wait until it is readable.
func (r *rawIO) read(fd uintptr) bool {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rp[0])), uintptr(len(r.rp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			r.rn = int(m)
		default:
			r.rerrno = e
		}
		return true
	}
}

func (r *rawIO) Write(p []byte) (int, error) {
	r.wp, r.wn, r.werrno = p, 0, 0
	err := r.rc.Write(r.writeFn)
	n, errno := r.wn, r.werrno
	r.wp = nil
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}

// write writes what is left of Write's bytes until the socket is full
// (false: wait for room) or all is written.
func (r *rawIO) write(fd uintptr) bool {
	for r.wn < len(r.wp) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.wp[r.wn])), uintptr(len(r.wp)-r.wn))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			r.wn += int(m)
		default:
			r.werrno = e
			return true
		}
	}
	return true
}
