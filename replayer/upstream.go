package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/child"
	"github.com/mcpmock/mcpmock/internal/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Upstream is a live MCP server that mcpmock talks to as a client: a
// command spawned once and kept (stdio), or a Streamable HTTP URL. The
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
	client    *http.Client
	sessionID string
	protocol  string
	closed    bool
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
	// URL is a Streamable HTTP endpoint.
	URL string
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
		u.client = &http.Client{}
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
	if u.client != nil {
		_, err := u.post(ctx, msg, nil)
		return err
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
			if u.client == nil {
				u.write(reply)
			} else {
				u.post(ctx, reply, nil)
			}
		default:
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromServer, Message: bytes.Clone(m.Raw)})
		}
		return false
	}
	if u.client != nil {
		done, err := u.post(ctx, request, one)
		if err != nil {
			return nil, err
		}
		if !done {
			return nil, fmt.Errorf("%w: no response to %s", ErrUpstream, msg.Method)
		}
		u.learn(msg.Method, in.Response.Message)
		return in, nil
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

// learn keeps the protocol version that initialize agreed on, for the
// MCP-Protocol-Version header.
func (u *Upstream) learn(method string, resp []byte) {
	if method != "initialize" {
		return
	}
	m, err := jsonrpc.Parse(resp)
	if err != nil || m.Result == nil {
		return
	}
	if v, err := jsonrpc.Member(m.Result, "protocolVersion"); err == nil && v != nil {
		var s string
		if jsonUnquote(v, &s) {
			u.protocol = s
		}
	}
}

// post sends one message over HTTP and hands each message of the answer
// (a JSON body or an event stream) to each, until each says done.
func (u *Upstream) post(ctx context.Context, body []byte, each func([]byte) bool) (done bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.opts.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUpstream, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if u.sessionID != "" {
		req.Header.Set(mcp.HeaderSessionID, u.sessionID)
	}
	msg, _ := jsonrpc.Parse(body) // nil for what is not one message
	mcp.SetRequestHeaders(req.Header, msg, u.protocol)
	resp, err := u.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUpstream, err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get(mcp.HeaderSessionID); id != "" {
		u.sessionID = id
	}
	if resp.StatusCode == http.StatusAccepted || each == nil {
		io.Copy(io.Discard, resp.Body)
		return false, nil
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return false, fmt.Errorf("%w: %s answered %s: %s", ErrUpstream, u.opts.URL, resp.Status, bytes.TrimSpace(b))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		// An answer is one message: read no more of it than the message
		// limit (the SSE reader below bounds each event alike).
		b, err := io.ReadAll(io.LimitReader(resp.Body, jsonrpc.DefaultMaxLine+1))
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUpstream, err)
		}
		if len(b) > jsonrpc.DefaultMaxLine {
			return false, fmt.Errorf("%w: %s answered more than the message limit of %d bytes; the answer was not read", ErrUpstream, u.opts.URL, jsonrpc.DefaultMaxLine)
		}
		elems, _, err := jsonrpc.SplitBatch(b)
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrUpstream, err)
		}
		for _, el := range elems {
			if each(el) {
				return true, nil
			}
		}
		return false, nil
	}
	sr := jsonrpc.NewSSEReader(resp.Body, 0)
	for {
		ev, err := sr.Next()
		if ev.Data != nil && each(ev.Data) {
			return true, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("%w: %v", ErrUpstream, err)
		}
	}
}

// Close ends the session: a command's stdin is closed, then it is sent
// SIGTERM if it has not exited within StopTimeout, then SIGKILL after
// StopTimeout more (child.Process.Stop); an error says the status of a
// command that did not exit with 0. Over HTTP, Close deletes the session.
// It is idempotent.
func (u *Upstream) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil
	}
	u.closed = true
	if u.client != nil {
		if u.sessionID != "" {
			if req, err := http.NewRequest(http.MethodDelete, u.opts.URL, nil); err == nil {
				req.Header.Set(mcp.HeaderSessionID, u.sessionID)
				if resp, err := u.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}
		u.client.CloseIdleConnections()
		return nil
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

func jsonUnquote(raw []byte, s *string) bool { return json.Unmarshal(raw, s) == nil }
