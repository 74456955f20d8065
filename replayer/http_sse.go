package replayer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// serveSSE serves the event stream of the HTTP+SSE transport (2024-11-05):
// one session per stream, whose first event, "endpoint", names the URL the
// client POSTs its messages to: HTTPOptions.MessagePath relative to the
// stream's URL, so that it is right under any prefix. Every server message of the session goes on this
// stream; the session ends with it.
func (h *HTTPHandler) serveSSE(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "Method Not Allowed: GET /sse opens the stream; messages go to the endpoint it names", http.StatusMethodNotAllowed)
		return
	}
	if _, ok := accepts(r.Header.Values("Accept")); !ok && len(r.Header.Values("Accept")) > 0 {
		http.Error(w, "Not Acceptable: Accept must contain 'text/event-stream'", http.StatusNotAcceptable)
		return
	}
	hs, ok := h.newSession(true)
	if !ok {
		http.Error(w, "Service Unavailable: the replay server is closing", http.StatusServiceUnavailable)
		return
	}
	defer h.deleteSession(hs)
	sw := newSSEWriter(w, nil)
	if sw.event("endpoint", []byte(h.opts.MessagePath+"?sessionId="+url.QueryEscape(hs.id))) != nil {
		return
	}
	h.stream(r.Context(), hs, sw)
	hs.end()
	hs.calls.wait()
}

// serveSSEMessage takes a POST to the endpoint of an HTTP+SSE session: 202
// at once, and the answers on the session's stream.
func (h *HTTPHandler) serveSSEMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	id := queryValue(r.URL.RawQuery, "sessionId")
	if id == "" {
		http.Error(w, "Bad Request: sessionId is required (use the endpoint of GET /sse)", http.StatusBadRequest)
		return
	}
	hs := h.session(id)
	if hs == nil || !hs.sse {
		http.Error(w, "Not Found: session not found", http.StatusNotFound)
		return
	}
	var one [1]incoming // a POST's messages: most often one
	msgs, _, ok := h.readPOST(w, r, one[:0])
	if !ok {
		return
	}
	// free, as answer's: every message was a request answered at once
	// from the cassette, as recorded; the POST is then released.
	free := h.e.keepsNothing()
	for _, m := range msgs {
		start := time.Now()
		plan := hs.s.receive(m.msg, &hs.calls)
		if plan == nil {
			free = false
			continue
		}
		if plan.immediate() {
			// It only queues a copy of its answer for the stream:
			// carried out here, with no goroutine or context of its
			// own, as on stdio.
			if !hs.calls.add(m.msg.ID, nil) {
				http.Error(w, "Not Found: the session ended", http.StatusNotFound)
				return
			}
			out := pooledOutlet(postOutlet{deliver: hs.deliverTo, later: hs.pushTo})
			hs.s.carry(context.Background(), m.msg, plan, start, &out[0])
			putOutlet(out)
			hs.calls.forget(m.msg.ID, nil)
			free = free && (postCall{msg: m.msg, plan: plan}).answeredAsRecorded()
			plan.releaseAll() // what it sent was copied (enqueue)
			continue
		}
		free = false
		// The answer goes on the event stream: a miss is explained after
		// the POST is answered, and the end of the session stops the
		// explanation.
		ctx, cancel := context.WithCancelCause(context.Background())
		if !hs.calls.add(m.msg.ID, cancel) {
			cancel(nil)
			http.Error(w, "Not Found: the session ended", http.StatusNotFound)
			return
		}
		out := &postOutlet{deliver: hs.deliverTo, later: hs.pushTo}
		msg := m.msg // the goroutine's own: m would move to the heap for every plan
		go func() {
			defer hs.calls.forget(msg.ID, cancel)
			defer cancel(nil)
			hs.s.carry(ctx, msg, plan, start, out)
			plan.releaseAll()
		}()
	}
	w.WriteHeader(http.StatusAccepted)
	if free {
		releasePOST(r, msgs)
	}
}

// queryValue is url.Values.Get of the query raw, without the map: the
// first value of key, unescaped.
func queryValue(raw, key string) string {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != key || strings.Contains(kv, ";") {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v
		}
	}
	return ""
}
