package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/internal/mcpclient"
)

// BridgeOptions configure the bridges between stdio and HTTP. The zero value
// (or nil) is the default.
type BridgeOptions struct {
	// Client sends requests to the HTTP server (StdioToHTTP); nil means a
	// client without timeouts.
	Client *http.Client
	// Logger receives the bridge's warnings; nil means silent.
	Logger *slog.Logger
	// MaxMessage is the longest message; 0 means jsonrpc.DefaultMaxLine.
	MaxMessage int
	// Env is added to the stdio server's environment (KEY=VALUE).
	Env []string
	// StopTimeout is how long requests in flight may take to be answered
	// once the client is gone (StdioToHTTP), and how long the stdio server
	// has to exit after its stdin closes, then after SIGTERM
	// (StdioBridge); 0 means 5 seconds.
	StopTimeout time.Duration
	// Guard, if set, decides what passes (relay.go); nil forwards all.
	Guard Filter
}

func (o *BridgeOptions) defaults() BridgeOptions {
	var c BridgeOptions
	if o != nil {
		c = *o
	}
	if c.Client == nil {
		c.Client = defaultClient()
	}
	if c.Logger == nil {
		c.Logger = livelog.Discard
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = jsonrpc.DefaultMaxLine
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 5 * time.Second
	}
	return c
}

// StdioToHTTP is the bridge from a stdio client to a Streamable HTTP server:
// it reads the client's messages from clientIn (one a line), sends each as a
// POST to upstream with the headers that the transport requires
// (Mcp-Session-Id once the server gave one, MCP-Protocol-Version, Mcp-Method,
// Mcp-Name), and writes the server's messages (JSON or SSE answers, the GET
// stream of the stateful era) to clientOut, one a line, as they arrive. A
// server of the HTTP+SSE transport (2024-11-05), which refuses the POST of
// initialize, is spoken to over its event stream instead. rec
// observes everything, with its HTTP description. It returns when clientIn
// ends (after the requests in flight are answered, or StopTimeout) or ctx
// ends; it then ends the session with DELETE.
func StdioToHTTP(ctx context.Context, upstream string, clientIn io.Reader, clientOut io.Writer, rec *Recorder, opts *BridgeOptions) error {
	o := opts.defaults()
	tap, err := NewHTTP(upstream, rec, &HTTPOptions{Client: o.Client, Logger: o.Logger, MaxMessage: o.MaxMessage})
	if err != nil {
		return err
	}
	mc, err := mcpclient.New(tap.upstream.String(), &mcpclient.Options{Client: o.Client, MaxMessage: tap.max})
	if err != nil {
		return err
	}
	b := &clientBridge{tap: tap, mc: mc, rec: rec, out: &lockedWriter{w: clientOut}, log: o.Logger}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.ctx = ctx
	b.relay = newRelay(ctx, o.Guard, relayEnds[bridgeAt]{toClient: b.toClient, toServer: b.toServer})

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		// This goroutine may stay blocked in a read of clientIn after ctx
		// ends; it owns nothing else.
		err := jsonrpc.PumpLines(clientIn, func(line []byte) error {
			select {
			case lines <- bytes.Clone(line):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, &jsonrpc.PumpOptions{Max: o.MaxMessage, TooLong: func(e *jsonrpc.LineTooLongError) error {
			o.Logger.Warn(e.Error())
			return nil
		}})
		if err == nil {
			err = io.EOF
		}
		readErr <- err
	}()
loop:
	for {
		select {
		case line := <-lines:
			b.fromClient(line)
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				o.Logger.Warn(fmt.Sprintf("reading the client: %v", err))
			}
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	// The client is gone: its held calls are withdrawn and the clocks
	// stopped; the requests in flight get their time.
	b.relay.close()
	done := make(chan struct{})
	go func() { b.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(o.StopTimeout):
		o.Logger.Warn(fmt.Sprintf("requests still unanswered %v after the client left were cut", o.StopTimeout))
	case <-ctx.Done():
	}
	b.endSession()
	cancel()
	b.streams.Wait()
	if failed := b.unreached.Load(); failed != nil && !b.reached.Load() {
		// The server never answered: a record that failed (status 1).
		return *failed
	}
	return nil
}

// clientBridge is the state of StdioToHTTP.
type clientBridge struct {
	ctx context.Context
	tap *HTTP
	mc  *mcpclient.Client
	rec *Recorder
	out *lockedWriter
	log *slog.Logger

	// relay carries the messages both ways, through the guard if there
	// is one (relay.go); its ends are toClient and toServer.
	relay *relay[bridgeAt]

	inflight sync.WaitGroup // POSTs waiting for their answers
	streams  sync.WaitGroup // the GET stream, the guard's own POSTs
	ex       atomic.Uint64

	// reached is set by the first HTTP answer of the server, whatever its
	// status; unreached is the first failure to reach it (refused, down).
	// A bridge whose server never answered ends with that error.
	reached   atomic.Bool
	unreached atomic.Pointer[error]

	mu      sync.Mutex // guards getOpen
	getOpen bool
}

// bridgeAt is what the bridge's relay ends know of a message: the
// exchange of the client's message (the POST that carries it, numbered
// when it came) and the request made of it then, the exchange and the
// description of a server message, and whether the client's answer is the
// bridge's own (unrecorded: an error for a request the server left
// unanswered, an answer to the guard's own request).
type bridgeAt struct {
	ex         uint64
	line       []byte
	req        *mcpclient.Request
	note       HTTPNote
	unrecorded bool
}

// fromClient records one client line, as the client sent it, under the
// exchange that will carry it, and gives it to the relay.
func (b *clientBridge) fromClient(line []byte) {
	req, err := b.mc.NewRequest(b.ctx, line)
	if err != nil {
		return
	}
	ex := b.tap.exchanges.Add(1)
	b.rec.ObserveHTTP(cassettes.FromClient, bytes.Clone(line), b.rec.now(), HTTPNote{Exchange: ex, RequestHeaders: recordedHeaders(req.HTTP.Header), URL: recordedURL(req.HTTP.URL)})
	b.relay.fromClient(bridgeAt{ex: ex, line: line, req: req}, "", line)
}

// toClient writes a message for the client as a line and records it
// (relay.go): a server message as it travelled, the guard's answer on the
// exchange of the client's message.
func (b *clientBridge) toClient(at bridgeAt, msg []byte, own bool) error {
	if !at.unrecorded {
		note := at.note
		if own {
			note = HTTPNote{Exchange: at.ex}
		}
		b.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(msg), b.rec.now(), note)
	}
	_, err := b.out.Write(append(bytes.Clone(msg), '\n'))
	return err
}

// toServer posts a message (relay.go): the client's on its exchange (with
// the request made of it when it came, if the guard passed it as it was),
// or the guard's own on an exchange that is not recorded.
func (b *clientBridge) toServer(at bridgeAt, msg []byte, own bool) error {
	if own {
		at = bridgeAt{}
	}
	req := at.req
	if req == nil || len(msg) != len(at.line) || len(msg) > 0 && &msg[0] != &at.line[0] {
		var err error
		if req, err = b.mc.NewRequest(b.ctx, msg); err != nil {
			return err
		}
	}
	b.send(req, msg, at.ex)
	return nil
}

// send posts one message on exchange ex (0: one of the guard's own, not
// recorded). A request is answered on its own goroutine; a notification
// or a response is sent before the next line is read, so that the server
// sees the client's messages in order.
func (b *clientBridge) send(req *mcpclient.Request, line []byte, ex uint64) {
	elems, _, _ := jsonrpc.SplitBatch(line)
	var ids []jsonrpc.ID
	init := false
	for _, el := range elems {
		if m, err := jsonrpc.Parse(el); err == nil && m.Kind() == jsonrpc.KindRequest {
			ids = append(ids, m.ID)
			init = init || m.Method == mcp.MethodInitialize
		}
	}
	if ex == 0 {
		// The guard's own: the end of the bridge waits for it (after its
		// context is cancelled).
		b.streams.Add(1)
		go func() {
			defer b.streams.Done()
			b.post(req, 0, ids, false)
		}()
		return
	}
	if len(ids) == 0 {
		b.post(req, ex, nil, false)
		return
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.post(req, ex, ids, init)
	}()
}

// post sends req and delivers what comes back to the client. ids are the
// requests in it that must get an answer; init says one is initialize.
func (b *clientBridge) post(req *mcpclient.Request, ex uint64, ids []jsonrpc.ID, init bool) {
	answered := map[jsonrpc.ID]bool{}
	var answer *mcpclient.Answer // the POST's, once it came
	// The guard's own POSTs (ex 0) are not recorded; what comes back
	// passes through the relay.
	deliver := func(data []byte, n HTTPNote) {
		if m, err := jsonrpc.Parse(data); err == nil && m.Kind() == jsonrpc.KindResponse {
			answered[m.ID] = true
			if init && m.Result != nil {
				b.openGet()
			}
		}
		b.relay.fromServer(bridgeAt{ex: ex, note: n, unrecorded: ex == 0}, "", bytes.Clone(data))
	}
	h := &mcpclient.Handler{
		Answer: func(a *mcpclient.Answer) {
			if a.Resumed {
				return
			}
			answer = a
			note := HTTPNote{Exchange: ex, Status: a.Status, Form: string(a.Form), ResponseHeaders: recordedHeaders(a.Header)}
			if trimmed := bytes.TrimSpace(a.Body); len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[' {
				note.Body = string(a.Body)
			}
			if ex != 0 {
				b.rec.ObserveHTTPResponse(note, b.rec.now())
			}
		},
		Message: func(m mcpclient.Message) bool {
			data := m.Data
			if m.Batch != nil {
				// A batch answer is passed on as it came, once; each of
				// its responses counts.
				if p, err := jsonrpc.Parse(m.Data); err == nil && p.Kind() == jsonrpc.KindResponse {
					answered[p.ID] = true
				}
				if m.Index > 0 {
					return false
				}
				data = m.Batch
			}
			if answer.Form != mcpclient.FormSSE && m.Stream != mcpclient.StreamSSE {
				if p, err := jsonrpc.Parse(data); err == nil && p.Kind() == jsonrpc.KindResponse && p.ID == "null" && len(ids) == 1 {
					// An error with no id (a refused POST) answers the request.
					data, _ = jsonrpc.WithID(data, ids[0])
				}
				deliver(data, HTTPNote{Exchange: ex})
				return false
			}
			if m.HasEventID && !b.tap.events.first(b.eventScope(ex), m.EventID, data) {
				return false // an echo on a resumed stream: the client has it already
			}
			deliver(data, HTTPNote{Exchange: ex, EventID: m.EventID, HasEventID: m.HasEventID})
			return false
		},
		Event: func(m mcpclient.Message) {
			if ex != 0 {
				b.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, EventID: m.EventID, HasEventID: true}, b.rec.now())
			}
		},
	}
	err := b.mc.Do(req, h)
	var left []jsonrpc.ID
	for _, id := range ids {
		if !answered[id] {
			left = append(left, id)
		}
	}
	var e *mcpclient.Error
	errors.As(err, &e)
	server := b.tap.shown
	if err == nil || (e != nil && e.Status != 0) {
		b.reached.Store(true)
	}
	switch {
	case err == nil || errors.Is(err, mcpclient.ErrNoAnswer):
	case e == nil || e.Status == 0:
		if b.ctx.Err() == nil {
			cause := err
			if e != nil && e.Err != nil {
				cause = e.Err
			}
			failed := fmt.Errorf("the server %s did not answer: %w", server, cause)
			b.unreached.CompareAndSwap(nil, &failed)
			b.failAll(ids, "mcpmock: "+failed.Error())
		}
		return
	case errors.Is(err, mcpclient.ErrTooLong) && answer != nil && answer.Form == mcpclient.FormSSE:
		b.log.Warn(fmt.Sprintf("an SSE event of %d bytes from the server %s is over the message limit of %d bytes; the stream is cut there", e.Size, server, b.tap.max))
	case errors.Is(err, mcpclient.ErrTooLong):
		// A line past the limit would not be read by the client either:
		// its requests get an error instead, and the rest is not read.
		size := fmt.Sprintf("more than %d bytes", b.tap.max)
		if e.Size > 0 {
			size = fmt.Sprintf("%d bytes", e.Size)
		}
		msg := fmt.Sprintf("mcpmock: the answer of the server %s (%s) is over the message limit of %d bytes; it was not passed on", server, size, b.tap.max)
		b.log.Warn(msg)
		if ex != 0 {
			b.rec.ObserveHTTP(cassettes.FromServer, fmt.Appendf(nil, "[mcpmock: an answer of %s came; it is over the message limit of %d bytes and was neither passed on nor kept]", size, b.tap.max), b.rec.now(), HTTPNote{Exchange: ex})
		}
		b.failAll(ids, msg)
		return
	case e.Status >= 400:
		b.failAll(left, fmt.Sprintf("mcpmock: the server answered HTTP %d: %s", e.Status, strings.TrimSpace(string(answer.Body))))
		return
	default:
		// The server went away in the middle of its answer (a crash, a
		// restart): no half message for the client, an error for each
		// of its requests.
		if b.ctx.Err() == nil {
			b.failAll(ids, fmt.Sprintf("mcpmock: the server %s broke off its answer (HTTP %d): %v", server, e.Status, errors.Unwrap(e.Err)))
		}
		return
	}
	if len(left) > 0 && b.ctx.Err() == nil {
		b.failAll(left, "mcpmock: the server's response stream ended without an answer")
	}
}

// openGet opens the GET stream of the stateful era once the session has
// an id; over HTTP+SSE, it takes the stream's messages that answer no
// request.
func (b *clientBridge) openGet() {
	b.mu.Lock()
	open := !b.getOpen && (b.mc.Session() != "" || b.mc.Transport() == mcpclient.SSE)
	b.getOpen = b.getOpen || open
	b.mu.Unlock()
	if open {
		b.streams.Add(1)
		go func() {
			defer b.streams.Done()
			b.getStream()
		}()
	}
}

// eventScope names where the event ids of exchange ex are unique
// (eventLog.scope): the bridge's session, or without one the exchange's
// stream, which its resumptions share.
func (b *clientBridge) eventScope(ex uint64) string {
	if s := b.mc.Session(); s != "" {
		return "s" + s
	}
	return "x" + strconv.FormatUint(ex, 10)
}

// getStream reads the GET stream of the stateful era until the session
// ends (a server without one answers 405: nothing to read).
func (b *clientBridge) getStream() {
	err := b.mc.Listen(b.ctx, &mcpclient.Handler{Message: func(m mcpclient.Message) bool {
		data := m.Data
		if m.Batch != nil {
			if m.Index > 0 {
				return false
			}
			data = m.Batch
		}
		if m.HasEventID && !b.tap.events.first(b.eventScope(0), m.EventID, data) {
			return false
		}
		b.relay.fromServer(bridgeAt{note: HTTPNote{Stream: "get", EventID: m.EventID, HasEventID: m.HasEventID}}, "", bytes.Clone(data))
		return false
	}})
	var e *mcpclient.Error
	if errors.Is(err, mcpclient.ErrTooLong) && errors.As(err, &e) {
		b.log.Warn(fmt.Sprintf("an SSE event of %d bytes from the server %s is over the message limit of %d bytes; the stream is cut there", e.Size, b.tap.shown, b.tap.max))
	}
}

// endSession ends the session with DELETE, as a client must when it leaves.
func (b *clientBridge) endSession() {
	b.mc.Close()
}

// failAll answers requests that will get no answer from the server with a
// JSON-RPC error of mcpmock's (not recorded). The errors pass through the
// relay as the server's answers would: the guard drops one for a call it
// has already answered (timed out), and keeps one for its own request.
func (b *clientBridge) failAll(ids []jsonrpc.ID, message string) {
	for _, id := range ids {
		b.relay.fromServer(bridgeAt{unrecorded: true}, "", jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: message}))
	}
}
