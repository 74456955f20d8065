package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/child"
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
	// StopTimeout is how long the child has to exit after its stdin closes
	// before it is sent SIGTERM, and then after SIGTERM before it is
	// killed; 0 means child.StdinGrace and child.TermGrace (5 seconds
	// each).
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
	if len(argv) == 0 {
		return 0, errors.New("recorder: no server command")
	}
	p, err := child.Start(argv, &child.Options{Env: o.Env, Dir: o.Dir, Stderr: stderr, Name: shownCommand(argv),
		StdinGrace: o.StopTimeout, TermGrace: o.StopTimeout})
	if err != nil {
		return 0, fmt.Errorf("recorder: %w", err)
	}
	defer p.Stdout().Close()

	out := &lockedWriter{w: clientOut}
	fromServer := p.Stdout() // once the server has exited, read while data comes
	// Client → server. This goroutine may stay blocked in a read of
	// clientIn after the server exits; it owns nothing else.
	clientClosed := make(chan struct{})
	var rl *relay[struct{}]
	if o.Guard != nil {
		rl = stdioRelay(ctx, o.Guard, p.Stdin(), out, rec) // guard.go
	}
	go func() {
		if rl != nil {
			guardClientLines(clientIn, rl, rec, o.MaxLine)
		} else {
			forwardLines(clientIn, p.Stdin(), cassettes.FromClient, rec, o.MaxLine)
		}
		// Closed before the server can see EOF and exit: a client that has
		// finished gets no answers of mcpmock's after the server's.
		close(clientClosed)
		p.Stop() // stdin closed, then SIGTERM, then SIGKILL
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
	// Signals are passed on; the end of ctx stops the server at once.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctxDone := ctx.Done()
		for {
			select {
			case sig := <-o.Signals:
				p.Signal(sig)
			case <-ctxDone:
				ctxDone = nil
				p.Terminate()
			case <-p.Done():
				return
			}
		}
	}()
	// The server's exit is noticed on its own: a wrapper (sh -c, npx,
	// uvx) may exit while a descendant keeps its stdout open, and the end
	// of file would come only when that one exits. Once the server has
	// exited, its stdout is read while data comes (child.ExitDrainGrace).
	<-serverDone
	<-p.Done()
	wg.Wait()
	status, err := p.Wait()
	if err != nil {
		return status, fmt.Errorf("recorder: %w", err)
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

// shownCommand is the server's program as errors name it: a NAME=VALUE
// written as for a shell shows no secret.
func shownCommand(argv []string) string {
	shown, _ := cassettes.RedactArgs(argv[:1])
	return shown[0]
}

// forwardLines copies r to w byte for byte, each line as soon as it is
// complete (a line longer than the read buffer is passed on in pieces as
// they come), and gives rec a copy of each line. It returns at EOF or on an
// error of either side.
func forwardLines(r io.Reader, w io.Writer, from cassettes.Direction, rec *Recorder, maxLine int) {
	jsonrpc.PumpLines(r, func(line []byte) error {
		// The copy is queued before the line is passed on, so that the
		// recorder sees a request before the answer it causes.
		rec.Observe(from, bytes.Clone(line), rec.now())
		return nil
	}, &jsonrpc.PumpOptions{Max: maxLine, Copy: w, TooLong: func(e *jsonrpc.LineTooLongError) error {
		rec.Observe(from, fmt.Appendf(nil, "[mcpmock: a line of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", e.Len, e.Max), rec.now())
		return nil
	}})
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
