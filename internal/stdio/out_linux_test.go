package stdio

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"
)

// fill writes to o until the stream takes no more, and returns what it took.
func fill(t *testing.T, o *Out) int {
	t.Helper()
	chunk := bytes.Repeat([]byte("x"), 4096)
	total := 0
	for range 1 << 16 {
		n, err := o.TryWrite(chunk)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n < len(chunk) {
			return total
		}
	}
	t.Fatal("the stream never filled")
	return 0
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestPipeTryWrite: on a full pipe TryWrite returns at once with what it
// wrote, the pipe's own description stays blocking (a parent sharing it
// would otherwise see EAGAIN), and every byte arrives in order.
func TestPipeTryWrite(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	o := NewOut(w)
	if o == nil {
		t.Fatal("NewOut(pipe) = nil")
	}
	defer o.Close()
	took := fill(t, o)
	if nonblocking(t, w) {
		t.Error("NewOut made the pipe's own description non-blocking")
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, int64(took+3)))
		got <- b
	}()
	if _, err := w.Write([]byte("end")); err != nil { // waits until read
		t.Fatal(err)
	}
	b := <-got
	if len(b) != took+3 || !bytes.Equal(b[took:], []byte("end")) || bytes.Count(b[:took], []byte("x")) != took {
		t.Fatalf("read %d bytes ending %q, want %d x then end", len(b), b[max(0, len(b)-5):], took)
	}
}

// TestSocketTryWrite: a socket (Node.js's children get socket pairs) is
// tried with MSG_DONTWAIT and stays blocking itself.
func TestSocketTryWrite(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(fds[0]), "w")
	r := os.NewFile(uintptr(fds[1]), "r")
	defer w.Close()
	defer r.Close()
	o := NewOut(w)
	if o == nil {
		t.Fatal("NewOut(socket) = nil")
	}
	if took := fill(t, o); took == 0 {
		t.Fatal("the socket took nothing")
	}
	if nonblocking(t, w) {
		t.Error("the socket was made non-blocking")
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Stat(); err != nil {
		t.Errorf("Close closed the socket itself: %v", err)
	}
}

// TestRegularFileIsNotTried: a file never makes a writer wait long, and is
// written as it is.
func TestRegularFileIsNotTried(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if o := NewOut(f); o != nil {
		t.Fatal("NewOut(regular file) != nil")
	}
}
