package stdio

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// Out writes a standard output without waiting: a pipe, or a socket
// (Node.js gives its children socket pairs). The writes that wait are the
// caller's, on the file itself.
type Out struct {
	fd   int  // a non-blocking description of the pipe, or the socket
	sock bool // fd is the socket, written with MSG_DONTWAIT
}

// NewOut returns an Out for f, or nil when f is neither a pipe nor a
// socket, or the pipe cannot be opened again.
//
// A pipe is opened again through /proc/self/fd, which gives a description
// of the same pipe of its own; that one is made non-blocking. Setting
// O_NONBLOCK on f itself would change it for every process that shares f's
// description (a parent whose stdout we inherited would then see EAGAIN). A
// socket is written with MSG_DONTWAIT, which asks the same per call. Close
// closes what NewOut opened, not f; the stream ends when both are closed.
func NewOut(f *os.File) *Out {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFSOCK:
		return &Out{fd: int(f.Fd()), sock: true}
	case syscall.S_IFIFO:
		fd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		return &Out{fd: fd}
	}
	return nil
}

// TryWrite writes what of p the stream takes at once. n < len(p) with a nil
// error means that the stream is full; a write that failed returns its
// error (EPIPE when the client closed its end), which the caller meets
// again when it writes the rest to the file.
func (o *Out) TryWrite(p []byte) (n int, err error) {
	for n < len(p) {
		var m int
		if o.sock {
			m, err = sendNoWait(o.fd, p[n:])
		} else {
			m, err = syscall.Write(o.fd, p[n:])
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return n, nil
		case err != nil:
			return n, err
		}
		n += m
	}
	return n, nil
}

// Close closes the description NewOut opened; the file stays open. Out is
// not used after.
func (o *Out) Close() error {
	if o.sock {
		return nil
	}
	return syscall.Close(o.fd)
}

func sendNoWait(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
