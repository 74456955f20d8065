package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A TCP connection is read and written with raw system calls, and a
// large answer to a client that reads late goes out whole (the writes
// wait for room in the socket), as does EOF.
func TestRawIO(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(big)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	defer s.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	time.Sleep(50 * time.Millisecond) // the socket's buffers fill first
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(body, big) {
		t.Fatalf("read %d bytes of body (%v), want the %d written", len(body), err, len(big))
	}

	a, b := net.Pipe() // no socket: the connection's own Read and Write serve
	defer a.Close()
	defer b.Close()
	if newRawIO(a) != nil {
		t.Error("a net.Pipe has no socket, yet newRawIO returned raw reads and writes")
	}
	tcp, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rio := newRawIO(tcp)
	if rio == nil {
		t.Fatal("newRawIO returned nil for a TCP connection")
	}
	io.WriteString(rio, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	tcp.SetReadDeadline(time.Now().Add(time.Millisecond))
	buf := make([]byte, 1<<20)
	for {
		if _, err = rio.Read(buf); err != nil {
			break
		}
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a raw read past its deadline returned %v, want a timeout", err)
	}
	tcp.Close()
	if _, err := rio.Read(buf); err == nil {
		t.Error("a raw read of a closed connection returned no error")
	}
}
