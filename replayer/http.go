package replayer

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
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

func (h *HTTPHandler) newSession(sse bool) (*httpSession, bool) {
	hs := newHTTPSession(h.e.newSession(), h.e.opts.Waiting, false)
	hs.id, hs.sse = h.opts.NewSessionID(), sse
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
		h.e.opts.Logger.Info(fmt.Sprintf("Last-Event-ID %q names no event of this session's streams: nothing to resend", lastID))
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
