package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/replayer"
)

// This file is the way in of stdio clients to a run: a client spawns
// MCPMOCK_COMMAND as its server; that is mcpmock itself in the internal
// command __connect, which carries its stdin and stdout over a loopback
// connection to the run, where the cassette's stdio front end (Engine.Serve)
// serves it as it serves replay's stdin. So its sessions are the run's, and
// count in its summary.
//
// The wire: __connect sends the run's token and a newline, then its stdin
// as it comes; the end of its stdin is the end of the connection's write
// side. The run sends frames: 'd', a 4-byte big-endian length and that many
// bytes of the server's stdout; or 'x' and a 4-byte exit status, the
// status a scripted fault (exit:STATUS) ended the server with. The end of
// the connection is the end of the server's stdout: __connect exits 0.

// connectCommand is the internal command of the stdio way in.
const connectCommand = "__connect"

const (
	frameData = 'd'
	frameExit = 'x'
	// maxFrame bounds a data frame that __connect accepts.
	maxFrame = 1 << 30
)

// runBridge accepts the connections of __connect for one cassette.
type runBridge struct {
	l     net.Listener
	token string
	serve func(ctx context.Context, r io.Reader, w io.Writer) error
	wg    sync.WaitGroup // the accept loop and every connection
}

// newRunBridge listens on a free loopback port and serves each connection
// with serve until ctx ends.
func newRunBridge(ctx context.Context, serve func(ctx context.Context, r io.Reader, w io.Writer) error) (*runBridge, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for stdio clients: %w", err)
	}
	var key [16]byte
	rand.Read(key[:])
	b := &runBridge{l: l, token: hex.EncodeToString(key[:]), serve: serve}
	b.wg.Add(1)
	go b.accept(ctx)
	return b, nil
}

// argv is the command line a stdio client runs as its server.
func (b *runBridge) argv(exe string) []string {
	return []string{exe, connectCommand, b.l.Addr().String(), b.token}
}

func (b *runBridge) accept(ctx context.Context) {
	defer b.wg.Done()
	for {
		conn, err := b.l.Accept()
		if err != nil {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.session(ctx, conn)
		}()
	}
}

// session serves one connection of __connect.
func (b *runBridge) session(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || subtle.ConstantTimeCompare([]byte(line), []byte(b.token+"\n")) != 1 {
		return // not __connect of this run
	}
	conn.SetReadDeadline(time.Time{})
	fw := &frameWriter{w: conn}
	err = b.serve(ctx, r, fw)
	var exit *replayer.ExitError
	if errors.As(err, &exit) {
		fw.exit(exit.Status)
	}
}

// close stops accepting and waits for the sessions, which end with ctx.
func (b *runBridge) close() {
	b.l.Close()
	b.wg.Wait()
}

// frameWriter writes the server's stdout as data frames.
type frameWriter struct {
	mu sync.Mutex // guards w: the engine writes from several goroutines
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for rest := p; len(rest) > 0; {
		n := min(len(rest), maxFrame)
		var h [5]byte
		h[0] = frameData
		binary.BigEndian.PutUint32(h[1:], uint32(n))
		if _, err := f.w.Write(append(h[:], rest[:n]...)); err != nil {
			return len(p) - len(rest), err
		}
		rest = rest[n:]
	}
	return len(p), nil
}

func (f *frameWriter) exit(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var h [5]byte
	h[0] = frameExit
	binary.BigEndian.PutUint32(h[1:], uint32(status))
	f.w.Write(h[:])
}

// connect is the internal command __connect ADDR TOKEN: a stdio server
// that is the replay of a run (see the top of this file).
func (e *env) connect(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return usagef("%s is run by the stdio clients of mcpmock run (MCPMOCK_COMMAND), not by hand", connectCommand)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", args[0])
	if err != nil {
		return fmt.Errorf("connect to mcpmock run at %s (has the run ended?): %w", args[0], err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, args[1]+"\n"); err != nil {
		return fmt.Errorf("connect to mcpmock run at %s: %w", args[0], err)
	}
	// The copy of stdin ends with stdin, or when the process exits after
	// the run closed the connection: nothing waits for it then, as for any
	// read of a stdio server's stdin when the server exits.
	go func() {
		io.Copy(conn, e.stdin)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	return readFrames(bufio.NewReader(conn), e.stdout)
}

// readFrames writes the data frames of r to w until r ends, and returns
// the exit status of an exit frame.
func readFrames(r io.Reader, w io.Writer) error {
	var h [5]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil // the end, or the run is gone: the server's stdout ends
		}
		n := binary.BigEndian.Uint32(h[1:])
		switch h[0] {
		case frameExit:
			return exitStatus(int(n))
		case frameData:
			if n > maxFrame {
				return fmt.Errorf("mcpmock run sent a frame of %d bytes", n)
			}
			if _, err := io.CopyN(w, r, int64(n)); err != nil {
				return nil
			}
		default:
			return fmt.Errorf("mcpmock run sent a frame of unknown kind %q", h[0])
		}
	}
}

// executable is the path of the running mcpmock, for MCPMOCK_COMMAND.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the mcpmock executable for MCPMOCK_COMMAND: %w", err)
	}
	return exe, nil
}
