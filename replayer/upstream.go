package replayer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/child"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcpclient"
)

// Upstream is a live MCP server that mcpmock talks to as a client: a
// command spawned once and kept (stdio), or an HTTP URL (Streamable HTTP,
// or the HTTP+SSE transport of 2024-11-05, found as the specification's
// backwards-compatibility section says). The
// new-episodes mode forwards the requests that the cassette cannot answer
// to it, and the drift check (mcpmock cassette verify) replays a cassette's
// requests against it. Calls are made one at a time.
type Upstream struct {
	opts UpstreamOptions

	mu sync.Mutex // serialises calls; guards the fields below
	// stdio
	proc  *child.Process
	lines chan []byte   // lines from the server; closed at its end
	read  chan struct{} // closed when the reader goroutine has ended
	// HTTP
	mc     *mcpclient.Client
	closed bool
}

// UpstreamOptions say which live server an Upstream talks to: exactly one
// of Command and URL.
type UpstreamOptions struct {
	// Command is the server's command line (stdio).
	Command []string
	// Env is added to the command's environment.
	Env []string
	// Stderr receives the command's stderr; nil means os.Stderr.
	Stderr io.Writer
	// URL is a Streamable HTTP endpoint, or the SSE endpoint of an
	// HTTP+SSE server (2024-11-05): a server that refuses the POST of
	// initialize with 400, 404 or 405 is asked for an event stream with
	// GET, and spoken to over HTTP+SSE if it sends its endpoint event.
	URL string
	// Header is added to every HTTP request (authorization, say).
	Header http.Header
	// Timeout bounds each call; 0 means 30 seconds.
	Timeout time.Duration
	// StopTimeout is how long the command has to exit after Close closes
	// its stdin before it is sent SIGTERM, and then after SIGTERM before it
	// is killed; 0 means child.StdinGrace and child.TermGrace (5 seconds
	// each).
	StopTimeout time.Duration
}

// ErrUpstream is wrapped by every error of the live server.
var ErrUpstream = errors.New("live server")

// DialUpstream starts the live server (a command) or prepares the HTTP
// client (a URL). No message is sent yet.
func DialUpstream(opts UpstreamOptions) (*Upstream, error) {
	u := &Upstream{opts: opts}
	if u.opts.Timeout <= 0 {
		u.opts.Timeout = 30 * time.Second
	}
	switch {
	case len(opts.Command) > 0 && opts.URL != "":
		return nil, fmt.Errorf("%w: give a command or a URL, not both", ErrUpstream)
	case opts.URL != "":
		mc, err := mcpclient.New(opts.URL, &mcpclient.Options{Header: opts.Header})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUpstream, err)
		}
		u.mc = mc
		return u, nil
	case len(opts.Command) == 0:
		return nil, fmt.Errorf("%w: no command and no URL", ErrUpstream)
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	p, err := child.Start(opts.Command, &child.Options{Env: opts.Env, Stderr: stderr,
		StdinGrace: opts.StopTimeout, TermGrace: opts.StopTimeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUpstream, err)
	}
	u.proc, u.lines, u.read = p, make(chan []byte, 64), make(chan struct{})
	go func() {
		defer close(u.read)
		defer p.Stdout().Close()
		defer close(u.lines)
		// A line past the message limit is skipped: the call it answers
		// ends with its timeout.
		jsonrpc.PumpLines(p.Stdout(), func(line []byte) error {
			u.lines <- bytes.Clone(line)
			return nil
		}, nil)
	}()
	return u, nil
}

// Notify sends a notification (or any message that needs no answer).
func (u *Upstream) Notify(ctx context.Context, msg []byte) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.mc != nil {
		if err := u.mc.Post(ctx, msg, nil); err != nil {
			return fmt.Errorf("%w: %v", ErrUpstream, err)
		}
		return nil
	}
	return u.write(msg)
}

func (u *Upstream) write(msg []byte) error {
	if _, err := u.proc.Stdin().Write(append(bytes.Clone(msg), '\n')); err != nil {
		return fmt.Errorf("%w: write: %v", ErrUpstream, err)
	}
	return nil
}

// Call sends a request and returns the interaction it made: the request,
// what the server sent while it was pending (its server-to-client requests
// are answered with -32601, and the answers recorded), and the response.
func (u *Upstream) Call(ctx context.Context, request []byte) (*cassettes.Interaction, error) {
	msg, err := jsonrpc.Parse(request)
	if err != nil || msg.Kind() != jsonrpc.KindRequest {
		return nil, fmt.Errorf("%w: not a request: %.80s", ErrUpstream, request)
	}
	ctx, cancel := context.WithTimeout(ctx, u.opts.Timeout)
	defer cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	in := &cassettes.Interaction{From: cassettes.FromClient, Request: bytes.Clone(request)}
	// one takes a server message; it reports true at the response.
	one := func(line []byte) bool {
		m, err := jsonrpc.Parse(line)
		if err != nil {
			s := string(line)
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromServer, Raw: &s})
			return false
		}
		switch m.Kind() {
		case jsonrpc.KindResponse:
			if m.ID == msg.ID {
				in.Response = &cassettes.Message{From: cassettes.FromServer, Message: bytes.Clone(m.Raw)}
				return true
			}
		case jsonrpc.KindRequest:
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromServer, Message: bytes.Clone(m.Raw)})
			reply := jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: -32601, Message: "mcpmock: " + m.Method + " is not supported while forwarding"})
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromClient, Message: reply})
			if u.mc == nil {
				u.write(reply)
			} else {
				u.mc.Post(ctx, reply, nil)
			}
		default:
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromServer, Message: bytes.Clone(m.Raw)})
		}
		return false
	}
	if u.mc != nil {
		done := false
		err := u.mc.Post(ctx, request, &mcpclient.Handler{Message: func(m mcpclient.Message) bool {
			done = one(m.Data)
			return done
		}})
		switch {
		case done:
			return in, nil
		case err != nil:
			return nil, fmt.Errorf("%w: %s: %v", ErrUpstream, msg.Method, err)
		}
		return nil, fmt.Errorf("%w: no response to %s", ErrUpstream, msg.Method)
	}
	if err := u.write(request); err != nil {
		return nil, err
	}
	for {
		select {
		case line, ok := <-u.lines:
			if !ok {
				return nil, fmt.Errorf("%w: the server closed its output before answering %s", ErrUpstream, msg.Method)
			}
			if one(line) {
				return in, nil
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: no answer to %s: %v", ErrUpstream, msg.Method, ctx.Err())
		}
	}
}

// Close ends the session: a command's stdin is closed, then it is sent
// SIGTERM if it has not exited within StopTimeout, then SIGKILL after
// StopTimeout more (child.Process.Stop); an error says the status of a
// command that did not exit with 0. Over HTTP, Close deletes the session
// (DELETE) or closes the HTTP+SSE stream. It is idempotent.
func (u *Upstream) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil
	}
	u.closed = true
	if u.mc != nil {
		return u.mc.Close()
	}
	// The lines the server still writes are dropped, so that its reader
	// can reach the end of its output.
	go func() {
		for range u.lines {
		}
	}()
	status, err := u.proc.Close()
	<-u.read
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrUpstream, err)
	case status != 0:
		return fmt.Errorf("%w: %q exited with status %d", ErrUpstream, u.opts.Command[0], status)
	}
	return nil
}
