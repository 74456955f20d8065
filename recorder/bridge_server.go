package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/child"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// StdioBridge is the bridge from HTTP clients to a stdio server: an
// http.Handler serving Streamable HTTP at /mcp from a child process that
// speaks newline-delimited JSON-RPC, recording what passes. It issues no
// session id (one child, one session): a POST of requests is answered with
// an SSE stream carrying the messages that belong to them and their answers
// (or one JSON body, for a client that accepts no event stream), a POST of
// notifications or responses with 202, and a GET opens the stream of the
// server's messages that belong to no request.
type StdioBridge struct {
	p   *child.Process
	rec *Recorder
	log *slog.Logger
	max int

	wmu sync.Mutex // guards writes to the server's stdin

	// relay carries the messages both ways, through the guard if there
	// is one; the routing of the server's messages to their POSTs (route)
	// is its client end.
	relay *relay[struct{}]

	mu       sync.Mutex                // guards the fields below
	waiting  map[jsonrpc.ID]*postState // request id → the POST that waits for its answer
	tokens   map[string]*postState     // progress token → POST
	order    []*postState              // POSTs with requests in flight, oldest first
	gets     map[*getState]bool
	backlog  [][]byte // messages for a GET stream that is not open yet
	closed   bool
	exitCode int

	done chan struct{} // closed when the child has exited and its output is read
}

type postState struct {
	msgs    chan []byte // messages for this POST, in order
	pending int         // answers still expected (under StdioBridge.mu)
}

type getState struct{ msgs chan []byte }

// NewStdioBridge starts the server argv and returns the bridge to it. The
// server's stderr goes to stderr.
func NewStdioBridge(argv []string, stderr io.Writer, rec *Recorder, opts *BridgeOptions) (*StdioBridge, error) {
	o := opts.defaults()
	if len(argv) == 0 {
		return nil, errors.New("recorder: no server command")
	}
	p, err := child.Start(argv, &child.Options{Env: o.Env, Stderr: stderr, Name: shownCommand(argv),
		StdinGrace: o.StopTimeout, TermGrace: o.StopTimeout})
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	b := &StdioBridge{p: p, rec: rec, log: o.Logger, max: o.MaxMessage,
		waiting: map[jsonrpc.ID]*postState{}, tokens: map[string]*postState{}, gets: map[*getState]bool{},
		done: make(chan struct{})}
	b.relay = newRelay(context.Background(), o.Guard, relayEnds[struct{}]{toClient: b.toClient, toServer: b.toServer})
	go b.readServer()
	return b, nil
}

// Done is closed once the server has exited.
func (b *StdioBridge) Done() <-chan struct{} { return b.done }

// readServer reads the server's lines and routes each to the POST or the
// GET stream it belongs to, until the server's stdout ends or, once the
// server process has exited, goes silent (a descendant may hold it open).
func (b *StdioBridge) readServer() {
	defer close(b.done)
	defer b.p.Stdout().Close()
	jsonrpc.PumpLines(b.p.Stdout(), func(line []byte) error {
		b.relay.fromServer(struct{}{}, "", bytes.Clone(line))
		return nil
	}, &jsonrpc.PumpOptions{Max: b.max, TooLong: func(e *jsonrpc.LineTooLongError) error {
		b.log.Warn(e.Error())
		return nil
	}})
	status, _ := b.p.Wait()
	// Answer what the server left unanswered, and end every stream.
	b.mu.Lock()
	b.closed, b.exitCode = true, status
	for id, p := range b.waiting {
		select {
		case p.msgs <- jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("mcpmock: the server exited (status %d) before answering", status)}):
		default:
		}
		p.pending--
		if p.pending == 0 {
			close(p.msgs)
		}
	}
	clear(b.waiting)
	for g := range b.gets {
		close(g.msgs)
	}
	clear(b.gets)
	b.mu.Unlock()
}

// toClient records a message for the client and routes it (relay.go). The
// guard's own answers (a batch's refusals together) are routed one by one,
// each to the POST of its request.
func (b *StdioBridge) toClient(_ struct{}, msg []byte, own bool) error {
	b.rec.Observe(cassettes.FromServer, bytes.Clone(msg), b.rec.now())
	if elems, batch, err := jsonrpc.SplitBatch(msg); own && batch && err == nil {
		for _, e := range elems {
			b.route(bytes.Clone(e))
		}
		return nil
	}
	b.route(msg)
	return nil
}

// toServer writes a message as a line to the server's stdin (relay.go). A
// body is the request's own (read here or by the guard, which reads each
// body once), and its recording's slice cannot reach past its end: the line
// is ended in the buffer's room past the body, or by a second write when
// there is none.
func (b *StdioBridge) toServer(_ struct{}, msg []byte, _ bool) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if len(msg) < cap(msg) {
		_, err := b.p.Stdin().Write(append(msg, '\n'))
		return err
	}
	if _, err := b.p.Stdin().Write(msg); err != nil {
		return err
	}
	_, err := b.p.Stdin().Write([]byte{'\n'})
	return err
}

// route hands a server message to its POST (by id, then by progress token,
// else the oldest POST in flight) or to the GET stream.
func (b *StdioBridge) route(line []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	msg, err := jsonrpc.Parse(line)
	var p *postState
	if err == nil {
		switch msg.Kind() {
		case jsonrpc.KindResponse:
			p = b.waiting[msg.ID]
			if p != nil {
				delete(b.waiting, msg.ID)
				p.msgs <- line
				p.pending--
				if p.pending == 0 {
					b.order = deletePost(b.order, p)
					close(p.msgs)
				}
				return
			}
		case jsonrpc.KindNotification:
			if msg.Method == "notifications/progress" {
				p = b.tokens[progressKeyOf(msg.Params)]
			} else if !mcp.SubscriptionNotification(msg.Method) && len(b.order) > 0 {
				p = b.order[len(b.order)-1]
			}
		case jsonrpc.KindRequest:
			if len(b.order) > 0 {
				p = b.order[len(b.order)-1]
			}
		}
	}
	if p != nil {
		select {
		case p.msgs <- line:
			return
		default: // the POST's buffer is full: the GET stream takes it
		}
	}
	for g := range b.gets {
		select {
		case g.msgs <- line:
			return
		default:
		}
	}
	if len(b.backlog) < 1000 {
		b.backlog = append(b.backlog, line)
	}
}

func deletePost(order []*postState, p *postState) []*postState {
	for i, q := range order {
		if q == p {
			return append(order[:i], order[i+1:]...)
		}
	}
	return order
}

// ServeHTTP serves Streamable HTTP at /mcp.
func (b *StdioBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		b.post(w, r)
	case http.MethodGet:
		b.get(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "mcpmock: method not allowed (this bridge issues no session to DELETE)", http.StatusMethodNotAllowed)
	}
}

func (b *StdioBridge) post(w http.ResponseWriter, r *http.Request) {
	body, ok := httpguard.Bytes(r) // read by the guard in front: no second copy
	var err error
	if !ok {
		body, err = io.ReadAll(io.LimitReader(r.Body, int64(b.max)+1))
	}
	if err != nil || len(body) > b.max {
		http.Error(w, "mcpmock: the request body is unreadable or too long", http.StatusBadRequest)
		return
	}
	body = bytes.TrimSpace(body)
	elems, batch, err := jsonrpc.SplitBatch(body)
	if err != nil || len(body) == 0 {
		writeJSON(w, http.StatusBadRequest, jsonrpc.ErrorResponse("null", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "mcpmock: the body is not JSON"}))
		return
	}
	p := &postState{msgs: make(chan []byte, 256)}
	var ids []jsonrpc.ID
	for _, el := range elems {
		m, err := jsonrpc.Parse(el)
		if err != nil {
			if !batch {
				writeJSON(w, http.StatusBadRequest, jsonrpc.ErrorResponse("null", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "mcpmock: " + err.Error()}))
				return
			}
			continue
		}
		if m.Kind() == jsonrpc.KindRequest {
			ids = append(ids, m.ID)
		}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		writeJSON(w, http.StatusBadGateway, jsonrpc.ErrorResponse("null", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcpmock: the server exited (status %d)", b.exitCode)}))
		return
	}
	for _, el := range elems {
		if m, err := jsonrpc.Parse(el); err == nil && m.Kind() == jsonrpc.KindRequest {
			b.waiting[m.ID] = p
			p.pending++
			if tok := string(mcp.ProgressToken(m.Params)); tok != "" {
				b.tokens[tok] = p
			}
		}
	}
	if p.pending > 0 {
		b.order = append(b.order, p)
	}
	b.mu.Unlock()

	b.rec.observeHeader(body[:len(body):len(body)], b.rec.now(), r.Header)
	werr := b.relay.fromClient(struct{}{}, "", body)
	if werr != nil {
		b.forget(p, ids)
		writeJSON(w, http.StatusBadGateway, jsonrpc.ErrorResponse("null", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpmock: the server's stdin is closed"}))
		return
	}
	if len(ids) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	defer b.forget(p, ids)
	if !accepts(r, "text/event-stream") {
		// One JSON body: wait for the answers, drop what else came.
		var answers [][]byte
		for {
			select {
			case m, ok := <-p.msgs:
				if !ok {
					if batch {
						writeJSON(w, http.StatusOK, jsonrpc.JoinBatch(answers))
					} else if len(answers) > 0 {
						writeJSON(w, http.StatusOK, answers[0])
					}
					return
				}
				if pm, err := jsonrpc.Parse(m); err == nil && pm.Kind() == jsonrpc.KindResponse {
					answers = append(answers, m)
				}
			case <-r.Context().Done():
				return
			}
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
	b.stream(w, r, p.msgs)
}

// forget drops a POST's waiters (its client went away).
func (b *StdioBridge) forget(p *postState, ids []jsonrpc.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		if b.waiting[id] == p {
			delete(b.waiting, id)
		}
	}
	for k, q := range b.tokens {
		if q == p {
			delete(b.tokens, k)
		}
	}
	b.order = deletePost(b.order, p)
}

// stream writes messages as SSE events until msgs closes or the client goes.
func (b *StdioBridge) stream(w http.ResponseWriter, r *http.Request, msgs <-chan []byte) {
	var buf []byte
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return
			}
			buf = jsonrpc.AppendEvent(buf[:0], jsonrpc.Event{Type: "message", Data: m})
			if _, err := w.Write(buf); err != nil {
				return
			}
			flush(w)
		case <-r.Context().Done():
			return
		}
	}
}

func (b *StdioBridge) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		http.Error(w, "mcpmock: the GET stream needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	g := &getState{msgs: make(chan []byte, 256)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		http.Error(w, "mcpmock: the server has exited", http.StatusBadGateway)
		return
	}
	for _, m := range b.backlog {
		g.msgs <- m
	}
	b.backlog = nil
	b.gets[g] = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.gets, g)
		b.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
	b.stream(w, r, g.msgs)
}

// CloseStreams ends the open GET streams, so that an http.Server's Shutdown
// does not wait for them.
func (b *StdioBridge) CloseStreams() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for g := range b.gets {
		close(g.msgs)
	}
	clear(b.gets)
}

// Close stops the server (its stdin closed, then SIGTERM, then SIGKILL,
// StopTimeout apart: child.Process.Stop) and returns its exit status once
// its output is read. It is idempotent.
func (b *StdioBridge) Close() (int, error) {
	// The held calls are withdrawn (their refusals still reach their
	// POSTs) and the clocks stopped before the server's stdin closes.
	b.relay.close()
	// Not under wmu: a write blocked on a server that reads no more ends
	// with the close.
	b.p.Stop()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exitCode, nil
}

func accepts(r *http.Request, ct string) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && (mt == ct || mt == "*/*") {
				return true
			}
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
