//go:build unix

package replayer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestBurstClientOverPipes: a client that writes a burst of requests before
// it reads an answer is read to the end, over OS pipes as a stdio server
// has them, and over sockets as Node.js gives them to its children. The
// answers are tried on the reading goroutine; a reader that waited on the
// full pipe of answers would stop reading, and the client, blocked on its
// own full pipe, would wait for ever.
func TestBurstClientOverPipes(t *testing.T) {
	pipe := func(t *testing.T) (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	socket := func(t *testing.T) (r, w *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	}
	t.Run("pipes", func(t *testing.T) { burst(t, pipe) })
	t.Run("sockets", func(t *testing.T) { burst(t, socket) })
}

func burst(t *testing.T, pair func(*testing.T) (r, w *os.File)) {
	big := strings.Repeat("x", 2000) // 4,000 answers of 2 KB: far more than a pipe holds
	e := engineOf(t, cassette(call(1, "big", `{}`, text(big))), nil)
	serverR, clientW := pair(t)
	clientR, serverW := pair(t)
	served := make(chan error, 1)
	go func() {
		served <- e.Serve(context.Background(), serverR, serverW)
		serverW.Close()
	}()
	const n = 4000
	wrote := make(chan error, 1)
	go func() {
		var burst []byte
		for i := range n {
			burst = fmt.Appendf(burst, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{}}}`+"\n", i+1)
		}
		_, err := clientW.Write(burst) // all of it before reading
		clientW.Close()
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client's burst was not read while its answers waited (deadlock)")
	}
	lr := jsonrpc.NewLineReader(clientR, 0)
	for i := range n {
		line, err := lr.ReadLine()
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		if !bytes.Contains(line, []byte(fmt.Sprintf(`"id":%d,`, i+1))) || !bytes.Contains(line, []byte(big)) {
			t.Fatalf("answer %d is %.80s…", i+1, line)
		}
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
