package recorder

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// StdioOptions configure the stdio tap. The zero value (or nil) is the
// default.
type StdioOptions struct {
	// Env is added to the child's environment (KEY=VALUE).
	Env []string
	// Dir is the child's working directory; "" means the current one.
	Dir string
	// Signals, if set, are passed on to the child (mcpmock forwards SIGINT
	// and SIGTERM this way).
	Signals <-chan os.Signal
	// MaxLine is the longest message the recorder keeps; a longer line is
	// still forwarded whole, and recorded as a note of its length. 0 means
	// jsonrpc.DefaultMaxLine (64 MiB).
	MaxLine int
	// StopTimeout is how long the child has to exit after its stdin closes,
	// and then after SIGTERM, before it is killed; 0 means 5 seconds.
	StopTimeout time.Duration
	// Guard, if set, decides what passes (guard.go); nil forwards all.
	Guard Filter
}

// Stdio runs the stdio tap: it starts the server argv, forwards clientIn to
// the server's stdin and the server's stdout to clientOut line by line as each
// line arrives, sends the server's stderr to stderr, and lets rec observe
// every line. It returns when the server has exited (after the client closed
// clientIn, or on its own), with the server's exit status. Client requests
// still unanswered when the server exits get a JSON-RPC error.
func Stdio(ctx context.Context, argv []string, clientIn io.Reader, clientOut, stderr io.Writer, rec *Recorder, opts *StdioOptions) (int, error) {
	var o StdioOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLine <= 0 {
		o.MaxLine = jsonrpc.DefaultMaxLine
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 5 * time.Second
	}
	if len(argv) == 0 {
		return 0, errors.New("recorder: no server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Dir = o.Dir
	cmd.Stderr = stderr
	// A stderr that is not a file is copied by a goroutine of exec's, which
	// a descendant holding the pipe would keep: Wait waits no longer than
	// stderrDrainGrace for it once the server has exited.
	cmd.WaitDelay = stderrDrainGrace
	// The tap's ends of the pipes to the child are under the runtime's
	// poller, as cmd.StdinPipe and StdoutPipe would put them: a forwarder
	// waiting for the server's next line is parked, holding no P and no
	// thread in a system call. (They were in blocking mode once, which
	// measured better while the tap ran with as many Ps as CPUs; with the
	// two more Ps that mcpmock record gives it, the poller measured 1.035
	// and 1.045 times the blocking pipes' calls/s in two interleaved runs
	// of the stdio benchmark, 30 rounds each, faster in 46 rounds of 60.)
	stdinR, childIn, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	childOut, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		childIn.Close()
		return 0, fmt.Errorf("recorder: %w", err)
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	err = cmd.Start()
	// The child has its ends now; the tap keeps only its own, so that the
	// server's exit is an end of file here.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		childIn.Close()
		childOut.Close()
		return 0, startError(argv, err)
	}
	defer childOut.Close()

	out := &lockedWriter{w: clientOut}
	fromServer := &exitReader{f: childOut}
	exited := make(chan struct{})
	// Client → server. This goroutine may stay blocked in a read of
	// clientIn after the server exits; it owns nothing else.
	clientClosed := make(chan struct{})
	var rl *relay[struct{}]
	if o.Guard != nil {
		rl = stdioRelay(ctx, o.Guard, childIn, out, rec) // guard.go
	}
	go func() {
		if rl != nil {
			guardClientLines(clientIn, rl, rec, o.MaxLine)
		} else {
			forwardLines(clientIn, childIn, cassettes.FromClient, rec, o.MaxLine)
		}
		// Closed before the server can see EOF and exit: a client that has
		// finished gets no answers of mcpmock's after the server's.
		close(clientClosed)
		childIn.Close()
	}()
	// Server → client.
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		if rl != nil {
			guardServerLines(fromServer, rl, rec, o.MaxLine)
		} else {
			forwardLines(fromServer, out, cassettes.FromServer, rec, o.MaxLine)
		}
	}()
	// Signals and the stop sequence once the client is gone.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var stopTimer <-chan time.Time
		stage := 0
		cc := clientClosed
		for {
			select {
			case sig := <-o.Signals:
				cmd.Process.Signal(sig)
			case <-cc:
				cc = nil
				stopTimer = time.After(o.StopTimeout)
			case <-ctx.Done():
				cmd.Process.Signal(syscall.SIGTERM)
				stage, stopTimer = 1, time.After(o.StopTimeout)
				ctx = context.Background()
			case <-stopTimer:
				if stage == 0 {
					cmd.Process.Signal(syscall.SIGTERM)
					stage, stopTimer = 1, time.After(o.StopTimeout)
				} else {
					cmd.Process.Kill()
					stopTimer = nil
				}
			case <-exited:
				return
			}
		}
	}()
	// The server's exit is noticed on its own: a wrapper (sh -c, npx,
	// uvx) may exit while a descendant keeps its stdout open, and the end
	// of file would come only when that one exits. Once the server has
	// exited, its stdout is read while data comes (exitReader).
	var waitErr error
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		waitErr = cmd.Wait()
	}()
	select {
	case <-serverDone:
		<-waited
	case <-waited:
		fromServer.exit()
		<-serverDone
	}
	close(exited)
	wg.Wait()

	status := 0
	var ee *exec.ExitError
	switch {
	case errors.As(waitErr, &ee):
		status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + int(ws.Signal())
		}
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// Exited with status 0; a descendant still holds its stderr.
	case waitErr != nil:
		return 1, fmt.Errorf("recorder: %w", waitErr)
	}
	// The server is gone while the client is still there: answer what it
	// left unanswered, so the client is not left waiting. These answers
	// are mcpmock's, not recorded.
	select {
	case <-clientClosed:
		return status, nil
	default:
	}
	// A server that died in the middle of a line left it unended: the
	// line is ended first, so that mcpmock's answers are lines of their
	// own that the client can parse (the half line is recorded as raw
	// text).
	out.endLine()
	for _, id := range rec.pendingIDs() {
		out.Write(append(jsonrpc.ErrorResponse(id, &jsonrpc.Error{
			Code:    jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("mcpmock: the server exited (status %d) before answering", status),
		}), '\n'))
	}
	return status, nil
}

// startError says that the server could not start. It names the program
// but gives away no secret of a NAME=VALUE written as for a shell.
func startError(argv []string, err error) error {
	if shown, n := cassettes.RedactArgs(argv[:1]); n > 0 {
		return fmt.Errorf("recorder: start server %q: %s", shown[0], strings.ReplaceAll(err.Error(), argv[0], shown[0]))
	}
	return fmt.Errorf("recorder: start server %q: %w", argv[0], err)
}

// forwardLines copies r to w line by line, each line as soon as it is
// complete (a line longer than the read buffer is passed on in pieces as
// they come), and gives rec a copy of each line. It returns at EOF or on an
// error of either side.
func forwardLines(r io.Reader, w io.Writer, from cassettes.Direction, rec *Recorder, maxLine int) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // the start of a line longer than the buffer
	longLen := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			// The copy is queued before the line is passed on, so that the
			// recorder sees a request before the answer it causes.
			at := time.Now()
			switch {
			case err == bufio.ErrBufferFull || long != nil || longLen > 0:
				longLen += len(chunk)
				if longLen <= maxLine {
					long = append(long, chunk...)
				}
				if err != bufio.ErrBufferFull {
					observeLine(rec, from, long, longLen, maxLine, at)
					long, longLen = nil, 0
				}
			default:
				observeLine(rec, from, append([]byte(nil), chunk...), len(chunk), maxLine, at)
			}
			if _, werr := w.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			if long != nil {
				observeLine(rec, from, long, longLen, maxLine, time.Now())
			}
			return
		}
	}
}

func observeLine(rec *Recorder, from cassettes.Direction, line []byte, n, maxLine int, at time.Time) {
	if n > maxLine {
		line = fmt.Appendf(nil, "[mcpmock: a line of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", n, maxLine)
	}
	trimmed := trimEOL(line)
	if len(trimmed) == 0 {
		return
	}
	rec.Observe(from, trimmed, at)
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex // guards w and open
	w  io.Writer
	// open says that the last byte written was not a line's end.
	open bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if n > 0 {
		l.open = p[n-1] != '\n'
	}
	return n, err
}

// endLine writes a newline if the last byte written did not end a line.
func (l *lockedWriter) endLine() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		l.w.Write([]byte{'\n'})
		l.open = false
	}
}

// exitReader reads the server's stdout. Once the server process has exited
// (exit), a read waits at most exitDrainGrace for data: what the server
// wrote before it exited is still read and forwarded, however slowly the
// client takes it, but a descendant that keeps the pipe open and silent
// does not keep the tap waiting.
type exitReader struct {
	f      *os.File
	exited atomic.Bool
}

// exitDrainGrace is how long a read of the server's stdout waits for data
// once the server process has exited.
const exitDrainGrace = 200 * time.Millisecond

// stderrDrainGrace is how long the copy of the server's stderr may go on
// once the server has exited (when stderr is not a file).
const stderrDrainGrace = time.Second

func (r *exitReader) Read(p []byte) (int, error) {
	if r.exited.Load() {
		r.f.SetReadDeadline(time.Now().Add(exitDrainGrace))
	}
	return r.f.Read(p)
}

// exit says that the server process has exited.
func (r *exitReader) exit() {
	r.exited.Store(true)
	r.f.SetReadDeadline(time.Now().Add(exitDrainGrace))
}
