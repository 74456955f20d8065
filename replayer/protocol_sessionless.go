package replayer

import (
	"net/http"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// This file replays a Streamable HTTP server of the stateful era that kept
// no sessions, such as the go-sdk's with StreamableHTTPOptions.Stateless:
// it answered initialize without an Mcp-Session-Id, so its replay sends
// none either. Each POST is answered on its own, as that server answers it
// in a session of the moment: what follows a response (a message that
// belongs to no request) is not sent, there is no GET stream and no
// DELETE (405, Allow: POST, as from the go-sdk), and an Mcp-Session-Id a
// client sends anyway is ignored. The requests share one replay state
// (HTTPOptions.StatelessKey), so that a call recorded several times
// answers in the recorded order, as the server's own state did.

// recordedWithoutSessions reports whether the cassette's server kept no
// sessions: some initialize was answered in the body of its POST (status
// 200, JSON or an event stream) with a result and without an
// Mcp-Session-Id, and no initialize was answered with one. A cassette
// recorded over stdio or HTTP+SSE (whose answers come on the event stream)
// says nothing, and its replay keeps sessions.
func (e *Engine) recordedWithoutSessions() bool {
	without := false
	for _, i := range e.byMethod["initialize"] {
		in := e.requests[i].interaction
		h := in.HTTP
		if h == nil {
			continue
		}
		if _, ok := h.ResponseHeaders[mcp.HeaderSessionID]; ok {
			return false
		}
		if h.Stream != "" || h.Status != http.StatusOK || (h.Form != "json" && h.Form != "sse") || in.Response == nil {
			continue
		}
		if m, err := jsonrpc.Parse(in.Response.Message); err == nil && m.Kind() == jsonrpc.KindResponse && m.Error == nil {
			without = true
		}
	}
	return without
}

// serveWithoutSession answers the messages of a stateful-era POST to the
// replay of a server without sessions: a session for this POST alone over
// the shared replay state, and no Mcp-Session-Id; free is answer's.
func (h *HTTPHandler) serveWithoutSession(w http.ResponseWriter, r *http.Request, msgs []incoming, batch bool) (free bool) {
	hs := newHTTPSession(h.sessionlessState(r), h.e.opts.Waiting, true)
	defer hs.end()
	go func() { // Close ends what is in flight, as it ends sessions
		select {
		case <-h.done:
			hs.end()
		case <-hs.done:
		}
	}()
	return h.answer(w, r, hs.s, hs, msgs, batch, func(http.Header) {})
}

// sessionlessState returns the replay state shared by the requests
// without session of the stateful era.
func (h *HTTPHandler) sessionlessState(r *http.Request) *session {
	return h.sharedState(r, h.sessionless, func(s *session) { s.noSession = true })
}

// sharedState returns the Session of states (h.stateless or
// h.sessionless) that holds the replay state of a request without
// session, as HTTPOptions.StatelessKey picks it; a new one is set up by
// init (which may be nil) before it is shared.
func (h *HTTPHandler) sharedState(r *http.Request, states map[string]*session, init func(*session)) *session {
	key := ""
	if h.opts.StatelessKey != nil {
		key = h.opts.StatelessKey(r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := states[key]
	if s == nil {
		s = h.e.newSession()
		if init != nil {
			init(s)
		}
		states[key] = s
	}
	return s
}

// refuseWithoutSessions answers a GET or DELETE to the replay of a server
// without sessions as the go-sdk's stateless server does.
func refuseWithoutSessions(w http.ResponseWriter) {
	w.Header().Set("Allow", "POST")
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
}
