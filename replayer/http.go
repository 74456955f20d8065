package replayer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// HTTPOptions configure the HTTP front end. The zero value (or nil) is the
// default.
type HTTPOptions struct {
	// Form chooses how a POSTed request is answered when the answer is the
	// response alone. "" answers in the recorded form (the interaction's
	// http.form) when the cassette has one and as application/json
	// otherwise; "json" always answers application/json; "sse" always
	// answers a text/event-stream. An answer that carries other messages
	// before the response (progress, server-to-client requests) is always
	// an event stream.
	Form string
	// StatelessKey picks the replay state of requests that carry no
	// session (those of 2026-07-28, and those of the stateful era to the
	// replay of a server that kept no sessions): requests with the same
	// key share one Session (its repeat counters), one for each era. nil
	// means one Session for all such traffic of the handler.
	StatelessKey func(*http.Request) string
	// NewSessionID makes the Mcp-Session-Id of a new session and the
	// session id of an HTTP+SSE connection; nil means 128 random bits in hex.
	NewSessionID func() string
	// MaxBodyBytes bounds a POST body (413 beyond it); 0 means 64 MiB
	// (jsonrpc.DefaultMaxLine, the default of the command's
	// --max-body-bytes), a negative value no bound (for a listener that
	// bounds bodies itself, as the command's does). recorder.HTTPOptions
	// has the same rule.
	MaxBodyBytes int64
	// KeepAlive is the interval of SSE comments on the long-lived streams
	// (the GET stream, the HTTP+SSE stream); 0 means 15 seconds, a
	// negative value none.
	KeepAlive time.Duration
	// SSEPath and MessagePath are the last path elements of the two
	// endpoints of the HTTP+SSE transport, wherever the handler is
	// mounted: a GET of a path ending in /SSEPath opens the event stream,
	// and its endpoint event names MessagePath relative to the stream's
	// URL (so it is right under any prefix); a POST to a path ending in
	// /MessagePath carries a message. "" means "sse" and "message". Each
	// is one path element (no slash).
	SSEPath, MessagePath string
	// Control enables the control endpoint (http_control.go): a POST to a
	// path ending in /_mcpmock/notify sends a notification to every live
	// session. false (the default) answers that path 404.
	Control bool
}

// HTTPHandler serves a cassette over HTTP. It is an http.Handler that can
// be mounted at any path (at a mux pattern such as "/api/mcp", or under
// http.StripPrefix): a path whose last element is HTTPOptions.SSEPath
// ("sse") or MessagePath ("message") is the HTTP+SSE transport of
// 2024-11-05 (the event stream and its POST endpoint), a path ending in
// /_mcpmock/notify is the control endpoint when HTTPOptions.Control is set
// (404 otherwise), and every other path is Streamable HTTP. Mounted at the root, that is
// Streamable HTTP at /mcp and HTTP+SSE at /sse, as mcpmock replay --listen
// serves it.
//
// Stateful era (up to 2025-11-25): each initialize starts a session with a
// fresh random Mcp-Session-Id and its own replay state; a later request
// without the header is answered 400, one with an unknown id 404; DELETE
// ends the session. A GET with the session id opens the stream that carries
// the server's messages that belong to no request (a list_changed). POSTed
// notifications and responses are answered 202.
//
// A server of the stateful era that kept no sessions (the recorded
// initialize was answered without Mcp-Session-Id: the go-sdk's
// StreamableHTTPOptions.Stateless) replays as one: no session is made and
// no Mcp-Session-Id sent, requests without one are answered from a replay
// state they share, and GET and DELETE get 405 (protocol_sessionless.go).
//
// Stateless era (2026-07-28, recognized by the MCP-Protocol-Version header
// or the request's _meta): no session; the Mcp-Method, Mcp-Name and
// MCP-Protocol-Version headers are checked against the body (400 with
// JSON-RPC error -32020 when they differ), a method never recorded gets 404
// with -32601, and replay state is shared as HTTPOptions.StatelessKey says.
// Server messages that belong to no request are not sent in this era.
//
// The handler does no Origin, Host or token checks: wrap it (mcpmock wraps
// it in internal/httpguard).
type HTTPHandler struct {
	e    *Engine
	opts HTTPOptions

	mu          sync.Mutex // guards sessions, stateless, sessionless and closed
	sessions    map[string]*httpSession
	stateless   map[string]*session
	sessionless map[string]*session // the shared states of a server without sessions (protocol_sessionless.go)
	closed      bool
	done        chan struct{} // closed by Close

	// noSessions says that the recorded server kept no sessions in the
	// stateful era (protocol_sessionless.go).
	noSessions bool

	params paramBindings // the tools' Mcp-Param-* headers (http_params.go)
}

// Handler returns an HTTP front end for the engine.
func (e *Engine) Handler(opts *HTTPOptions) *HTTPHandler {
	h := &HTTPHandler{e: e, sessions: map[string]*httpSession{}, stateless: map[string]*session{}, sessionless: map[string]*session{},
		done: make(chan struct{}), noSessions: e.recordedWithoutSessions()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.NewSessionID == nil {
		h.opts.NewSessionID = randomID
	}
	if h.opts.MaxBodyBytes == 0 {
		h.opts.MaxBodyBytes = jsonrpc.DefaultMaxLine
	}
	if h.opts.SSEPath == "" {
		h.opts.SSEPath = "sse"
	}
	if h.opts.MessagePath == "" {
		h.opts.MessagePath = "message"
	}
	for _, p := range []string{h.opts.SSEPath, h.opts.MessagePath} {
		if strings.Contains(p, "/") || p == "." || p == ".." {
			panic(fmt.Sprintf("replayer: HTTPOptions path %q is not one path element", p))
		}
	}
	if h.opts.KeepAlive == 0 {
		h.opts.KeepAlive = 15 * time.Second
	}
	return h
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Close ends every session and every open stream (the GET streams, the
// HTTP+SSE streams), so that an http.Server's Shutdown does not wait for
// them. Later requests of those sessions get 404. Close is idempotent.
func (h *HTTPHandler) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.done)
	sessions := h.sessions
	h.sessions = map[string]*httpSession{}
	for _, s := range h.stateless {
		s.endSubscriptions()
	}
	h.mu.Unlock()
	for _, hs := range sessions {
		hs.end()
	}
}

// Sessions returns the number of live stateful sessions (Streamable HTTP
// and HTTP+SSE).
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// ServeHTTP routes by the last element of the request's path (see
// HTTPHandler), so that the handler serves the same under any prefix.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case isControl(p):
		if !h.opts.Control {
			http.Error(w, "Not Found: the control endpoint is off (replayer.HTTPOptions.Control)", http.StatusNotFound)
			return
		}
		h.serveNotify(w, r)
	case path.Base(p) == h.opts.SSEPath:
		h.serveSSE(w, r)
	case path.Base(p) == h.opts.MessagePath:
		h.serveSSEMessage(w, r)
	default:
		h.serveStreamable(w, r)
	}
}

// httpSession is one stateful session: Streamable HTTP with an
// Mcp-Session-Id, or one HTTP+SSE connection.
type httpSession struct {
	id string
	s  *session

	sse bool // an HTTP+SSE session (set before it is shared)
	// ephemeral marks the session of one POST to the replay of a server
	// without sessions (protocol_sessionless.go): nothing outlives the
	// POST (no GET stream, no resumption).
	ephemeral bool

	mu    sync.Mutex // guards queue, pushed, written, flushed, streamed, stream and ended
	queue [][]byte   // messages waiting for the stream
	// pushed and written count the messages queued for the stream and
	// written to it; flushed is closed (and replaced) at each write.
	pushed, written uint64
	flushed         chan struct{}
	streamed        bool // a GET stream is open
	// The GET stream's events, for Last-Event-ID (http_resume.go).
	stream streamLog
	posts  postStreams // the POST streams kept for Last-Event-ID (http_resume.go)
	calls  inflight    // requests in flight (executor.go)
	ended  bool
	detach func()        // removes the session's outlet for Notify
	wake   chan struct{} // signals the stream that queue grew (capacity 1)
	done   chan struct{} // closed when the session ends
}

// maxQueued bounds the messages a session keeps for a GET stream that is
// not open.
const maxQueued = 10000

func (h *HTTPHandler) newSession(sse bool) (*httpSession, bool) {
	hs := &httpSession{id: h.opts.NewSessionID(), s: h.e.newSession(), sse: sse,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	h.sessions[hs.id] = hs
	hs.detach = hs.s.attach(hs.push)
	return hs, true
}

func (h *HTTPHandler) session(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func (h *HTTPHandler) deleteSession(hs *httpSession) {
	h.mu.Lock()
	if h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
	}
	h.mu.Unlock()
	hs.end()
}

// end cancels what is in flight and ends the session's stream.
func (hs *httpSession) end() {
	hs.mu.Lock()
	if hs.ended {
		hs.mu.Unlock()
		return
	}
	hs.ended = true
	hs.calls.end(errSessionEnded)
	close(hs.done)
	detach := hs.detach
	hs.mu.Unlock()
	// Outside hs.mu: detaching waits for what the session's client
	// notifications caused, which pushes to the stream (cause.go).
	if detach != nil {
		detach()
	}
}

var errSessionEnded = errors.New("session ended")

// push queues a message for the session's stream.
func (hs *httpSession) push(msg []byte) { hs.enqueue(msg) }

// enqueue queues a message for the session's stream and returns its
// number, 0 when it was dropped (the queue is full).
func (hs *httpSession) enqueue(msg []byte) uint64 {
	var n uint64
	hs.mu.Lock()
	if len(hs.queue) < maxQueued {
		hs.queue = append(hs.queue, msg)
		hs.pushed++
		n = hs.pushed
	}
	hs.mu.Unlock()
	select {
	case hs.wake <- struct{}{}:
	default:
	}
	return n
}

// flushWait bounds how long pushWritten waits for the stream.
const flushWait = time.Second

// pushWritten queues a message for the session's stream and, while a GET
// stream is open, waits (at most flushWait) until it is written: a server
// message that came before a POST's response, live, then reaches the
// client before the response, as the two streams are two connections.
func (hs *httpSession) pushWritten(msg []byte) {
	n := hs.enqueue(msg)
	t := time.NewTimer(flushWait)
	defer t.Stop()
	for n > 0 {
		hs.mu.Lock()
		done, flushed := !hs.streamed || hs.written >= n || hs.ended, hs.flushed
		if flushed == nil {
			hs.flushed = make(chan struct{})
			flushed = hs.flushed
		}
		hs.mu.Unlock()
		if done {
			return
		}
		select {
		case <-flushed:
		case <-t.C:
			return
		case <-hs.done:
			return
		}
	}
}

// wrote notes that the stream wrote a message.
func (hs *httpSession) wrote() {
	hs.mu.Lock()
	hs.written++
	if hs.flushed != nil {
		close(hs.flushed)
		hs.flushed = nil
	}
	hs.mu.Unlock()
}

func (hs *httpSession) take() [][]byte {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	q := hs.queue
	hs.queue = nil
	return q
}

// stream writes the session's queued messages to an SSE stream until the
// session ends, the client goes away or the handler closes.
func (h *HTTPHandler) stream(ctx context.Context, hs *httpSession, sw *sseWriter) {
	tick, stop := h.keepAlives()
	defer stop()
	for {
		for _, msg := range hs.take() {
			var err error
			if hs.sse {
				err = sw.event("message", msg)
			} else {
				// The GET stream: each event gets an id and is kept
				// for a client that resumes (http_resume.go).
				err = sw.eventID(hs.logEvent(msg), "message", msg)
			}
			if err != nil {
				return
			}
			hs.wrote()
		}
		select {
		case <-hs.wake:
		case <-tick:
			if sw.comment("keep-alive") != nil {
				return
			}
		case <-hs.done:
			return
		case <-h.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (h *HTTPHandler) serveStreamable(w http.ResponseWriter, r *http.Request) {
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if version != "" && !mcp.Known(version) && !mcp.Stateless(version) {
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version %q (supported versions: %v)", version, mcp.Versions()), http.StatusBadRequest)
		return
	}
	modern := mcp.Stateless(version)
	switch r.Method {
	case http.MethodPost:
		h.servePOST(w, r, modern)
	case http.MethodGet:
		if modern {
			w.Header().Set("Allow", "POST")
			http.Error(w, "Method Not Allowed: protocol version "+version+" has no GET stream", http.StatusMethodNotAllowed)
			return
		}
		if h.noSessions {
			refuseWithoutSessions(w)
			return
		}
		h.serveGET(w, r)
	case http.MethodDelete:
		if modern {
			w.Header().Set("Allow", "POST")
			http.Error(w, "Method Not Allowed: protocol version "+version+" has no sessions", http.StatusMethodNotAllowed)
			return
		}
		if h.noSessions {
			refuseWithoutSessions(w)
			return
		}
		h.serveDELETE(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// lookup finds the session named by the request's Mcp-Session-Id: 400
// without the header, 404 for an unknown one.
func (h *HTTPHandler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(mcp.HeaderSessionID)
	if id == "" {
		http.Error(w, fmt.Sprintf("Bad Request: %s %s requires an %s header (send initialize first)", r.Method, r.URL.Path, mcp.HeaderSessionID), http.StatusBadRequest)
		return nil
	}
	hs := h.session(id)
	if hs == nil {
		http.Error(w, "Not Found: session not found (it ended, or never existed in this replay)", http.StatusNotFound)
	}
	return hs
}

func (h *HTTPHandler) serveGET(w http.ResponseWriter, r *http.Request) {
	if _, ok := accepts(r.Header.Values("Accept")); !ok {
		http.Error(w, "Not Acceptable: Accept must contain 'text/event-stream' for GET requests", http.StatusNotAcceptable)
		return
	}
	hs := h.lookup(w, r)
	if hs == nil {
		return
	}
	if h.resumePOST(w, r, hs) { // http_resume.go
		return
	}
	lastID := r.Header.Get(mcp.HeaderLastEventID)
	ctx, done, ok := hs.openStream(r, hs.isStreamEvent(lastID)) // http_resume.go
	switch {
	case ok:
	case r.Context().Err() != nil:
		return
	case lastID == "":
		http.Error(w, "Conflict: only one GET stream is allowed per session", http.StatusConflict)
		return
	default:
		// An id of no stream of the session: a stream that carries
		// nothing, beside the open GET stream.
		h.e.opts.Logger.Info(fmt.Sprintf("mcpmock: Last-Event-ID %q names no event of this session's streams: nothing to resend", lastID))
		h.keepOpen(r.Context(), hs, newSSEWriter(w, nil), nil)
		return
	}
	defer hs.closeStream(done)
	sw := newSSEWriter(w, nil)
	if hs.resend(lastID, sw, h.e.opts.Logger) != nil {
		return
	}
	h.stream(ctx, hs, sw)
}

func (h *HTTPHandler) serveDELETE(w http.ResponseWriter, r *http.Request) {
	hs := h.lookup(w, r)
	if hs == nil {
		return
	}
	h.deleteSession(hs)
	w.WriteHeader(http.StatusNoContent)
}

// incoming is one parsed message of a POST body.
type incoming struct {
	raw []byte
	msg *jsonrpc.Message
}

// readPOST checks a POST's headers and reads its messages. It answers the
// request itself and returns ok false on any error.
func (h *HTTPHandler) readPOST(w http.ResponseWriter, r *http.Request) (msgs []incoming, batch, ok bool) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Unsupported Media Type: Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return nil, false, false
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false, false
		}
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false, false
	}
	if !json.Valid(body) {
		livelog.Raw(h.e.opts.Logger, livelog.ToServer, body, "parse error")
		h.e.stats.messages.Add(1)
		writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeParseError, "Parse error: the body is not JSON", nil)
		return nil, false, false
	}
	elems, batch, err := jsonrpc.SplitBatch(body)
	if err == nil && batch && len(elems) == 0 {
		err = errors.New("empty batch")
	}
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		return nil, false, false
	}
	for _, el := range elems {
		msg, err := jsonrpc.Parse(el)
		if err != nil {
			h.e.stats.messages.Add(1)
			livelog.Raw(h.e.opts.Logger, livelog.ToServer, el, "invalid message")
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				writeRPCError(w, http.StatusBadRequest, invalidID(el, msg), rpcErr.Code, rpcErr.Message, nil)
			} else {
				writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
			}
			return nil, false, false
		}
		msgs = append(msgs, incoming{raw: el, msg: msg})
	}
	return msgs, batch, true
}

// readBody reads a POST body within max bytes (any size for a negative
// max): the bytes that the guard in
// front (internal/httpguard) has read already, as they are, or else the
// body itself.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if b, ok := httpguard.Bytes(r); ok && (max < 0 || int64(len(b)) <= max) {
		return b, nil
	}
	if max < 0 {
		return io.ReadAll(r.Body)
	}
	if r.ContentLength > max {
		// Refused before it is read: the client need not send it.
		return nil, &http.MaxBytesError{Limit: max}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

func (h *HTTPHandler) servePOST(w http.ResponseWriter, r *http.Request, modern bool) {
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if !jsonOK || !streamOK {
		http.Error(w, "Not Acceptable: Accept must contain both 'application/json' and 'text/event-stream'", http.StatusNotAcceptable)
		return
	}
	msgs, batch, ok := h.readPOST(w, r)
	if !ok {
		return
	}
	if !modern {
		for _, m := range msgs {
			if m.msg.Kind() == jsonrpc.KindRequest && mcp.MetaVersion(m.msg.Params) != "" {
				modern = true
			}
		}
	}
	if modern {
		h.serveStateless(w, r, msgs, batch)
		return
	}
	if batch && !mcp.Batches(r.Header.Get(mcp.HeaderProtocolVersion)) {
		http.Error(w, "Bad Request: JSON-RPC batches are not supported in 2025-06-18 and later", http.StatusBadRequest)
		return
	}
	if h.noSessions {
		h.serveWithoutSession(w, r, msgs, batch) // protocol_sessionless.go
		return
	}
	var hs *httpSession
	created := false
	if r.Header.Get(mcp.HeaderSessionID) == "" && slices.ContainsFunc(msgs, func(m incoming) bool { return m.msg.Method == "initialize" && m.msg.Kind() == jsonrpc.KindRequest }) {
		if hs, ok = h.newSession(false); !ok {
			http.Error(w, "Service Unavailable: the replay server is closing", http.StatusServiceUnavailable)
			return
		}
		created = true
	} else if hs = h.lookup(w, r); hs == nil {
		return
	}
	h.answer(w, r, hs.s, hs, msgs, batch, func(hd http.Header) {
		if created {
			hd.Set(mcp.HeaderSessionID, hs.id)
		}
	})
}

// answer handles the messages of one POST within a session and writes the
// HTTP answer: 202 when there is no request, else the responses as JSON or
// as an event stream. hs is nil for stateless traffic.
func (h *HTTPHandler) answer(w http.ResponseWriter, r *http.Request, s *session, hs *httpSession, msgs []incoming, batch bool, headers func(http.Header)) {
	start := time.Now()
	var table *inflight
	if hs != nil {
		table = &hs.calls
	}
	var calls []postCall
	for _, m := range msgs {
		if plan := s.receive(m.msg, table); plan != nil {
			calls = append(calls, postCall{msg: m.msg, plan: plan})
		}
	}
	// Every plan is carried out before answer returns (a resumable stream
	// whose client went away goes on here, detached from the request). The
	// messages were written or copied, unless a resumable stream keeps them
	// for a client that comes back.
	resumable := false
	defer func() {
		for _, c := range calls {
			if resumable {
				c.plan.release()
			} else {
				c.plan.releaseAll()
			}
		}
	}()
	headers(w.Header())
	if len(calls) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sse, eventIDs := h.form(calls, batch)
	// (A scripted status answers alone, whatever the form.)
	sse = sse && (batch || calls[0].plan.httpFault() == nil)
	// A resumable stream (http_resume.go) goes on when the client goes
	// away; other answers end with it.
	resumable = sse && hs != nil && !hs.ephemeral && len(eventIDs) > 0
	base := r.Context()
	if resumable {
		base = context.WithoutCancel(base)
	}
	for _, c := range calls {
		// Under base itself, not a context made from it, which ends a
		// moment after it: the explanation stops as the client leaves.
		s.explainMiss(base, c.msg, c.plan)
	}
	// Each request can be cancelled alone (notifications/cancelled).
	for i := range calls {
		ctx, cancel := context.WithCancelCause(base)
		defer cancel(nil)
		calls[i].ctx = ctx
		if table != nil {
			forget, ok := table.add(calls[i].msg.ID, cancel)
			if !ok {
				http.Error(w, "Not Found: the session ended", http.StatusNotFound)
				return
			}
			defer forget()
		}
	}
	post := postOutlet{later: hs.laterOutlet(), start: start}
	if post.later != nil {
		post.early = hs.pushWritten
	}
	if hs != nil && !hs.sse && batchesAllowed(r) {
		post.join = true // recorded server batches go as one event (protocol_batch.go)
	}
	if !sse {
		h.answerJSON(w, r, s, calls, batch, post, hs == nil)
		return
	}
	h.answerSSE(w, s, hs, calls, eventIDs, resumable, post)
}

// postCall is one request of a POST, its plan and its context.
type postCall struct {
	msg  *jsonrpc.Message
	plan *answerPlan
	ctx  context.Context
}

// form says whether the answer to calls is an event stream, and with which
// recorded event ids: JSON when every answer is the response alone (and
// the options or the recording do not ask for a stream).
func (h *HTTPHandler) form(calls []postCall, batch bool) (sse bool, eventIDs []string) {
	for _, c := range calls {
		if c.plan.streams() {
			sse = true
		}
		rec := h.e.recordedHTTP(c.plan)
		switch {
		case h.opts.Form == "sse":
			sse = true
		case h.opts.Form == "" && rec != nil && rec.Form == "sse":
			sse = true
		}
		if rec != nil && !batch {
			eventIDs = rec.EventIDs
		}
	}
	return sse, eventIDs
}

// answerJSON answers calls with a JSON body: the response, or the array of
// a batch's responses. A scripted HTTP status takes its place.
func (h *HTTPHandler) answerJSON(w http.ResponseWriter, r *http.Request, s *session, calls []postCall, batch bool, post postOutlet, stateless bool) {
	outs := make([]postOutlet, len(calls))
	eachCall(len(calls), func(i int) {
		o := &outs[i]
		*o = post
		o.deliver = func(msg []byte, _ bool) error { o.response = msg; return nil }
		if !batch {
			o.fault = w
		}
		s.carry(calls[i].ctx, calls[i].msg, calls[i].plan, post.start, o)
	})
	if r.Context().Err() != nil || outs[0].faulted {
		return // the client went away, or the status was written
	}
	for i := range outs {
		if outs[i].aborted {
			abortHTTP(w)
			return
		}
	}
	if batch {
		var out [][]byte
		for _, o := range outs {
			if o.response != nil {
				out = append(out, o.response)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(jsonrpc.JoinBatch(out))
		return
	}
	plan, response := calls[0].plan, outs[0].response
	if response == nil {
		// Cancelled by the client before the response: nothing to say.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	status := h.e.statusOf(plan, response, stateless)
	if rec := h.e.recordedHTTP(plan); rec != nil && status >= 400 {
		for _, k := range []string{"Retry-After", "WWW-Authenticate"} {
			if v, ok := rec.ResponseHeaders[k]; ok {
				w.Header().Set(k, v)
			}
		}
	}
	w.WriteHeader(status)
	if t := plan.Trickle; t > 0 {
		trickleWrite(calls[0].ctx, w, response, t)
		return
	}
	w.Write(response)
}

// answerSSE answers calls with an event stream, each request's messages
// as they come. A resumable stream keeps its events for a client that
// comes back with Last-Event-ID.
func (h *HTTPHandler) answerSSE(w http.ResponseWriter, s *session, hs *httpSession, calls []postCall, eventIDs []string, resumable bool, post postOutlet) {
	// An answer that starts with a message sends the stream's headers
	// with it; one that starts by waiting opens the stream first.
	sw := openSSE(w, eventIDs, len(calls) > 1 || !startsWithSend(calls[0].plan))
	send := func(msg []byte) error { return sw.event("message", msg) }
	// The response ends the stream: when nothing comes after it, it goes
	// with the end of the HTTP response.
	sendLast := send
	if len(calls) == 1 && endsWithResponse(calls[0].plan) {
		sendLast = func(msg []byte) error { return sw.last("message", msg) }
	}
	if resumable {
		var end func()
		send, end = hs.resumablePOST(sw, eventIDs)
		sendLast = send
		defer end()
		post.detached = true
	}
	post.withResponse = true
	post.deliver = func(msg []byte, response bool) error {
		if response {
			return sendLast(msg)
		}
		return send(msg)
	}
	eachCall(len(calls), func(i int) {
		o := post
		s.carry(calls[i].ctx, calls[i].msg, calls[i].plan, post.start, &o)
		if o.aborted {
			h.e.opts.Logger.Warn("✗ scripted fault: event stream cut (" + calls[i].plan.Scripted + ")")
		}
	})
}

// postOutlet carries a plan out into the answer of a POST (executor.go).
type postOutlet struct {
	start   time.Time
	deliver func(msg []byte, response bool) error // the POST's answer
	later   func([]byte)                          // the GET stream; nil drops
	// early, when set, takes what goes on the GET stream before the
	// answer (pushWritten); answered says the answer went.
	early    func([]byte)
	answered bool
	// join and withResponse say how recorded server batches go; detached
	// marks a resumable stream, which goes on when the client goes away.
	join, withResponse, detached bool
	// fault, when set, takes a scripted HTTP status (faulted records that
	// it did); aborted records a scripted cut, close or exit.
	fault    http.ResponseWriter
	faulted  bool
	aborted  bool
	response []byte // what deliver kept, for a JSON answer
}

func (o *postOutlet) send(m outMessage) error {
	switch {
	case m.later && !o.answered && o.early != nil:
		o.early(m.raw)
	case m.later:
		if o.later != nil {
			o.later(m.raw)
		}
	default:
		o.answered = o.answered || m.response
		return o.deliver(m.raw, m.response)
	}
	return nil
}

func (o *postOutlet) end(*step) { o.aborted = true }

func (o *postOutlet) status() func(*step) {
	if o.fault == nil {
		return nil
	}
	return func(st *step) {
		writeStatus(o.fault, st)
		o.faulted = true
	}
}

func (o *postOutlet) batches() (join, withResponse bool) { return o.join, o.withResponse }

func (o *postOutlet) outlives() bool { return o.detached }

// laterOutlet is where server messages that follow an answer go: the
// session's GET stream; nil (dropped) without a session that outlives the
// POST.
func (hs *httpSession) laterOutlet() func([]byte) {
	if hs == nil || hs.ephemeral {
		return nil
	}
	return hs.push
}

// eachCall runs run(0) to run(n-1) at the same time and waits for them:
// the answers to the requests of a batch go on side by side. One request
// (the common case) runs on the caller's goroutine.
func eachCall(n int, run func(i int)) {
	if n == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	wg.Wait()
}

// endsWithResponse reports whether a plan's last step sends the response.
func endsWithResponse(p *answerPlan) bool {
	return len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Kind == stepSend && p.Steps[len(p.Steps)-1].Response
}

// startsWithSend reports whether a plan's first step sends a message.
func startsWithSend(p *answerPlan) bool {
	return len(p.Steps) > 0 && p.Steps[0].Kind == stepSend
}

// recordedHTTP returns how the interaction that answers a plan travelled
// over HTTP, or nil.
func (e *Engine) recordedHTTP(p *answerPlan) *cassettes.HTTP {
	if p.Interaction <= 0 || p.Interaction > len(e.cassette.Interactions) {
		return nil
	}
	return e.cassette.Interactions[p.Interaction-1].HTTP
}

// statusOf is the HTTP status of a JSON answer: the recorded one for a
// recorded error, 404 for method-not-found in the stateless era (as its
// transport requires), else 200.
func (e *Engine) statusOf(p *answerPlan, response []byte, stateless bool) int {
	m, err := jsonrpc.Parse(response)
	if err != nil || m.Error == nil {
		return http.StatusOK
	}
	if rec := e.recordedHTTP(p); rec != nil && rec.Status >= 400 && p.Miss == nil {
		return rec.Status
	}
	if stateless {
		switch m.Error.Code {
		case jsonrpc.CodeMethodNotFound:
			return http.StatusNotFound
		case CodeHeaderMismatch, CodeUnsupportedProtocolVersion, CodeMissingRequiredClientCapability:
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}
