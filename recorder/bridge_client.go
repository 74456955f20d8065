package recorder

import (
	"bytes"
	"context"
	"encoding/json"
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
// stream of the stateful era) to clientOut, one a line, as they arrive. rec
// observes everything, with its HTTP description. It returns when clientIn
// ends (after the requests in flight are answered, or StopTimeout) or ctx
// ends; it then ends the session with DELETE.
func StdioToHTTP(ctx context.Context, upstream string, clientIn io.Reader, clientOut io.Writer, rec *Recorder, opts *BridgeOptions) error {
	o := opts.defaults()
	tap, err := NewHTTP(upstream, rec, &HTTPOptions{Client: o.Client, Logger: o.Logger, MaxMessage: o.MaxMessage})
	if err != nil {
		return err
	}
	b := &clientBridge{tap: tap, url: tap.upstream.String(), rec: rec, out: &lockedWriter{w: clientOut}, log: o.Logger, client: o.Client}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.ctx = ctx
	b.relay = newRelay(ctx, o.Guard, relayEnds[bridgeAt]{toClient: b.toClient, toServer: b.toServer})

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		// This goroutine may stay blocked in a read of clientIn after ctx
		// ends; it owns nothing else.
		lr := jsonrpc.NewLineReader(clientIn, o.MaxMessage)
		for {
			line, err := lr.ReadLine()
			if errors.Is(err, jsonrpc.ErrLineTooLong) {
				o.Logger.Warn("mcpmock: " + err.Error())
				continue
			}
			if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- bytes.Clone(line):
			case <-ctx.Done():
				return
			}
		}
	}()
loop:
	for {
		select {
		case line := <-lines:
			b.fromClient(line)
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				o.Logger.Warn(fmt.Sprintf("mcpmock: reading the client: %v", err))
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
		o.Logger.Warn(fmt.Sprintf("mcpmock: requests still unanswered %v after the client left were cut", o.StopTimeout))
	case <-ctx.Done():
	}
	b.endSession()
	cancel()
	b.streams.Wait()
	return nil
}

// clientBridge is the state of StdioToHTTP.
type clientBridge struct {
	ctx    context.Context
	tap    *HTTP
	url    string
	rec    *Recorder
	out    *lockedWriter
	log    *slog.Logger
	client *http.Client

	// relay carries the messages both ways, through the guard if there
	// is one (relay.go); its ends are toClient and toServer.
	relay *relay[bridgeAt]

	inflight sync.WaitGroup // POSTs waiting for their answers
	streams  sync.WaitGroup // the GET stream, the guard's own POSTs
	ex       atomic.Uint64

	mu      sync.Mutex // guards session, version and getOpen
	session string
	version string
	getOpen bool
}

// bridgeAt is what the bridge's relay ends know of a message: the
// exchange of the client's message (the POST that carries it, numbered
// when it came, or the one whose response carried a server message), how a
// server message travelled, and whether the client's answer is the
// bridge's own (unrecorded: an error for a request the server left
// unanswered, an answer to the guard's own request).
type bridgeAt struct {
	ex         uint64
	note       HTTPNote
	unrecorded bool
}

// fromClient records one client line, as the client sent it, under the
// exchange that will carry it, and gives it to the relay.
func (b *clientBridge) fromClient(line []byte) {
	h := http.Header{}
	b.setHeaders(h, firstMessage(line))
	ex := b.tap.exchanges.Add(1)
	u := *b.tap.upstream
	b.rec.ObserveHTTP(cassettes.FromClient, bytes.Clone(line), time.Now(), HTTPNote{Exchange: ex, RequestHeaders: recordedHeaders(h), URL: recordedURL(&u)})
	b.relay.fromClient(bridgeAt{ex: ex}, "", line)
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
		b.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(msg), time.Now(), note)
	}
	_, err := b.out.Write(append(bytes.Clone(msg), '\n'))
	return err
}

// toServer posts a message (relay.go): the client's, on its exchange, or
// the guard's own on an exchange that is not recorded.
func (b *clientBridge) toServer(at bridgeAt, msg []byte, own bool) error {
	if own {
		b.send(msg, 0)
		return nil
	}
	b.send(msg, at.ex)
	return nil
}

// firstMessage is the message, or the first of a batch; nil if there is
// none.
func firstMessage(line []byte) *jsonrpc.Message {
	elems, _, err := jsonrpc.SplitBatch(line)
	if err != nil || len(elems) == 0 {
		return nil
	}
	m, _ := jsonrpc.Parse(elems[0])
	return m
}

// send posts one message on exchange ex (0: one of the guard's own, not
// recorded). A request is answered on its own goroutine; a notification
// or a response is sent before the next line is read, so that the server
// sees the client's messages in order.
func (b *clientBridge) send(line []byte, ex uint64) {
	first := firstMessage(line)
	elems, _, _ := jsonrpc.SplitBatch(line)
	hasRequest := false
	var ids []jsonrpc.ID
	for _, el := range elems {
		if m, err := jsonrpc.Parse(el); err == nil && m.Kind() == jsonrpc.KindRequest {
			hasRequest = true
			ids = append(ids, m.ID)
		}
	}
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url, bytes.NewReader(line))
	if err != nil {
		return
	}
	b.setHeaders(req.Header, first)
	if ex == 0 {
		b.goOwn(func() { b.post(req, 0, ids, first) })
		return
	}
	if !hasRequest {
		b.post(req, ex, nil, first)
		return
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.post(req, ex, ids, first)
	}()
}

// goOwn runs a POST of the guard's own, which the end of the bridge waits
// for (after its context is cancelled).
func (b *clientBridge) goOwn(f func()) {
	b.streams.Add(1)
	go func() {
		defer b.streams.Done()
		f()
	}()
}

func (b *clientBridge) setHeaders(h http.Header, msg *jsonrpc.Message) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	session, version := b.session, b.version
	b.mu.Unlock()
	if session != "" {
		h.Set(mcp.HeaderSessionID, session)
	}
	mcp.SetRequestHeaders(h, msg, version)
}

// post sends req and delivers what comes back to the client. ids are the
// requests in it that must get an answer.
func (b *clientBridge) post(req *http.Request, ex uint64, ids []jsonrpc.ID, msg *jsonrpc.Message) {
	resp, err := b.client.Do(req)
	if err != nil {
		if b.ctx.Err() == nil {
			b.failAll(ids, fmt.Sprintf("mcpmock: the server %s did not answer: %v", b.tap.upstream.Redacted(), err))
		}
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get(mcp.HeaderSessionID); sid != "" {
		b.mu.Lock()
		b.session = sid
		b.mu.Unlock()
	}
	form := formOf(resp)
	note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}
	answered := map[jsonrpc.ID]bool{}
	// The guard's own POSTs (ex 0) are not recorded.
	observeResponse := func(n HTTPNote) {
		if ex != 0 {
			b.rec.ObserveHTTPResponse(n, time.Now())
		}
	}
	deliver := func(data []byte, n HTTPNote) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			return
		}
		if m, err := jsonrpc.Parse(data); err == nil && m.Kind() == jsonrpc.KindResponse {
			answered[m.ID] = true
			b.learn(m, msg)
		}
		b.relay.fromServer(bridgeAt{ex: ex, note: n, unrecorded: ex == 0}, "", bytes.Clone(data))
	}
	if form == "sse" {
		observeResponse(note)
		lastID := b.readStream(resp.Body, ex, "", deliver)
		// A stream that ended before its answers (2025-11-25 lets a server
		// close it and the client poll): resume it with Last-Event-ID.
		for tries := 0; lastID != "" && len(answered) < len(ids) && tries < 5 && b.ctx.Err() == nil; tries++ {
			lastID = b.resume(lastID, ex, deliver)
		}
	} else {
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(b.tap.max)+1))
		if err == nil && len(data) > b.tap.max {
			// A line past the limit would not be read by the client either:
			// its requests get an error instead, and the rest is not read.
			size := fmt.Sprintf("more than %d bytes", b.tap.max)
			if resp.ContentLength > 0 {
				size = fmt.Sprintf("%d bytes", resp.ContentLength)
			}
			msg := fmt.Sprintf("mcpmock: the answer of the server %s (%s) is over the message limit of %d bytes; it was not passed on", b.tap.upstream.Redacted(), size, b.tap.max)
			b.log.Warn(msg)
			if ex != 0 {
				b.rec.ObserveHTTPResponse(note, time.Now())
				b.rec.ObserveHTTP(cassettes.FromServer, fmt.Appendf(nil, "[mcpmock: an answer of %s came; it is over the message limit of %d bytes and was neither passed on nor kept]", size, b.tap.max), time.Now(), HTTPNote{Exchange: ex})
			}
			b.failAll(ids, msg)
			return
		}
		if err != nil {
			// The server went away in the middle of its answer (a crash, a
			// restart): no half message for the client, an error for each
			// of its requests.
			if b.ctx.Err() == nil {
				b.failAll(ids, fmt.Sprintf("mcpmock: the server %s broke off its answer (HTTP %d): %v", b.tap.upstream.Redacted(), resp.StatusCode, err))
			}
			return
		}
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[' {
			note.Body = string(data)
		}
		observeResponse(note)
		if note.Body == "" && len(trimmed) > 0 {
			if m, err := jsonrpc.Parse(trimmed); err == nil && m.Kind() == jsonrpc.KindResponse && m.ID == "null" && len(ids) == 1 {
				// An error with no id (a refused POST) answers the request.
				trimmed, _ = jsonrpc.WithID(trimmed, ids[0])
			}
			deliver(trimmed, HTTPNote{Exchange: ex})
		}
		if resp.StatusCode >= 400 {
			var left []jsonrpc.ID
			for _, id := range ids {
				if !answered[id] {
					left = append(left, id)
				}
			}
			b.failAll(left, fmt.Sprintf("mcpmock: the server answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data))))
		}
	}
	var left []jsonrpc.ID
	for _, id := range ids {
		if !answered[id] {
			left = append(left, id)
		}
	}
	if len(left) > 0 && resp.StatusCode < 400 && b.ctx.Err() == nil {
		b.failAll(left, "mcpmock: the server's response stream ended without an answer")
	}
}

// learn picks the session's protocol version out of an initialize result,
// and opens the GET stream of the stateful era.
func (b *clientBridge) learn(resp *jsonrpc.Message, req *jsonrpc.Message) {
	if req == nil || req.Method != "initialize" || resp.Result == nil {
		return
	}
	v, _ := jsonrpc.Member(resp.Result, "protocolVersion")
	var version string
	json.Unmarshal(v, &version)
	b.mu.Lock()
	b.version = version
	open := !b.getOpen && b.session != ""
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

// readStream delivers the messages of an event stream and returns the last
// event id seen.
func (b *clientBridge) readStream(body io.Reader, ex uint64, stream string, deliver func([]byte, HTTPNote)) string {
	sr := jsonrpc.NewSSEReader(body, b.tap.max)
	last := ""
	for {
		ev, err := sr.Next()
		if err != nil {
			return last
		}
		if ev.TooLong {
			b.log.Warn(fmt.Sprintf("mcpmock: an SSE event of %d bytes from the server %s is over the message limit of %d bytes; the stream is cut there", ev.Size, b.tap.upstream.Redacted(), b.tap.max))
			return ""
		}
		if ev.HasID {
			last = ev.ID
		}
		message := ev.Data != nil && (ev.Type == "" || ev.Type == "message") && !jsonrpc.NoMessage(ev.Data)
		if message && ev.HasID && !b.tap.events.first(b.eventScope(ex), ev.ID, ev.Data) {
			continue // an echo on a resumed stream: the client has it already
		}
		if message {
			deliver(ev.Data, HTTPNote{Exchange: ex, Stream: stream, EventID: ev.ID, HasEventID: ev.HasID})
		} else if ev.HasID && stream == "" && ex != 0 {
			b.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, EventID: ev.ID, HasEventID: true}, time.Now())
		}
	}
}

// eventScope names where the event ids of exchange ex are unique
// (eventLog.scope): the bridge's session, or without one the exchange's
// stream, which its resumptions share.
func (b *clientBridge) eventScope(ex uint64) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session != "" {
		return "s" + b.session
	}
	return "x" + strconv.FormatUint(ex, 10)
}

// resume reopens a stream with GET and Last-Event-ID.
func (b *clientBridge) resume(lastID string, ex uint64, deliver func([]byte, HTTPNote)) string {
	req, err := http.NewRequestWithContext(b.ctx, http.MethodGet, b.url, nil)
	if err != nil {
		return ""
	}
	b.setHeaders(req.Header, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(mcp.HeaderLastEventID, lastID)
	resp, err := b.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if formOf(resp) != "sse" {
		return ""
	}
	return b.readStream(resp.Body, ex, "", deliver)
}

// getStream reads the GET stream of the stateful era until the session ends.
func (b *clientBridge) getStream() {
	req, err := http.NewRequestWithContext(b.ctx, http.MethodGet, b.url, nil)
	if err != nil {
		return
	}
	b.setHeaders(req.Header, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if formOf(resp) != "sse" {
		return // 405: the server has no GET stream
	}
	b.readStream(resp.Body, 0, "get", func(data []byte, n HTTPNote) {
		b.relay.fromServer(bridgeAt{note: n}, "", bytes.Clone(bytes.TrimSpace(data)))
	})
}

// endSession ends the session with DELETE, as a client must when it leaves.
func (b *clientBridge) endSession() {
	b.mu.Lock()
	session := b.session
	b.mu.Unlock()
	if session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.url, nil)
	if err != nil {
		return
	}
	b.setHeaders(req.Header, nil)
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
	}
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
