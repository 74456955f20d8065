package recorder

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// HTTPNote says how an observed message travelled over HTTP. The HTTP tap
// numbers each HTTP request it forwards (an exchange): the client's messages
// in a POST body and the server's messages in the response to it carry the
// same Exchange, which is how the Recorder knows, better than on stdio, which
// request the server's progress, logs and requests belong to.
type HTTPNote struct {
	// Exchange numbers the HTTP request that carried the message, or whose
	// response carried it. 0 means none (the message is placed as on stdio).
	Exchange uint64
	// Stream is "get" for a server message that came on the GET stream (it
	// belongs to no request), "listen" for one on a subscriptions/listen
	// stream, "" for a POST and its response.
	Stream string
	// EventID is the SSE event id of a server message, when HasEventID.
	EventID    string
	HasEventID bool
	// RequestHeaders are the headers that matter of the client's HTTP
	// request (filtered and redacted by the tap); set on client messages.
	RequestHeaders map[string]string
	// URL is the path and query of the client's HTTP request, secret-looking
	// query parameters redacted; set on client messages.
	URL string

	// What the HTTP tap hands over as it is, for the recorder's goroutine
	// to filter and redact (into RequestHeaders, URL and ResponseHeaders)
	// off the forwarding path. Neither side changes them.
	reqHeader  http.Header
	reqURL     *url.URL
	respHeader http.Header

	// The response to the exchange, on a note observed without a message
	// (ObserveHTTPResponse): its status, its form ("json", "sse", "none"),
	// its headers that matter, and a body that is not JSON-RPC.
	Status          int
	Form            string
	ResponseHeaders map[string]string
	Body            string
}

// ObserveHTTP is Observe for a message that travelled over HTTP, with how it
// travelled. It never blocks on the recording and takes ownership of data.
func (r *Recorder) ObserveHTTP(from cassettes.Direction, data []byte, at time.Time, note HTTPNote) {
	r.enqueue(observed{from: from, data: data, at: at, http: &note})
}

// ObserveHTTPResponse records the response to an exchange (status, form,
// headers, a body that is not JSON-RPC) on the interactions that the
// exchange's client messages opened. It is queued like a message, so call it
// when the response's headers arrive, before forwarding them.
func (r *Recorder) ObserveHTTPResponse(note HTTPNote, at time.Time) {
	r.enqueue(observed{from: cassettes.FromServer, at: at, http: &note})
}

func (r *Recorder) enqueue(o observed) {
	r.qmu.Lock()
	if r.closed {
		r.qmu.Unlock()
		return
	}
	first := len(r.queue) == 0
	r.queue = append(r.queue, o)
	r.qmu.Unlock()
	if !first {
		return // the builder is already woken for this batch
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// addHTTP is add with an HTTP note (nil on stdio).
func (b *builder) addHTTP(from cassettes.Direction, data []byte, at cassettes.Millis, note *HTTPNote) bool {
	if note == nil {
		return b.add(from, data, at)
	}
	if data == nil {
		b.httpResponse(note)
		return false
	}
	before := len(b.c.Interactions)
	b.landed, b.hint, b.noOwner = -1, -1, false
	if from == cassettes.FromServer {
		switch {
		case note.Stream != "":
			b.noOwner = true
		case note.Exchange != 0:
			b.hint = b.exchangeOwner(note.Exchange)
		}
	}
	completed := b.add(from, data, at)
	landed := b.landed
	b.landed, b.hint, b.noOwner = -1, -1, false

	if from == cassettes.FromClient {
		// The interactions that the POST opened carry its URL and headers.
		headers, u := note.RequestHeaders, note.URL
		if headers == nil && note.reqHeader != nil {
			headers = recordedHeaders(note.reqHeader)
		}
		if u == "" && note.reqURL != nil {
			u = recordedURL(note.reqURL)
		}
		for i := before; i < len(b.c.Interactions); i++ {
			in := &b.c.Interactions[i]
			if in.From != cassettes.FromClient || in.Raw != nil {
				continue
			}
			in.HTTP = &cassettes.HTTP{URL: u, RequestHeaders: headers}
			if note.Exchange != 0 {
				b.exchanges[note.Exchange] = append(b.exchanges[note.Exchange], i)
			}
		}
		return completed
	}
	if landed < 0 {
		return completed
	}
	in := &b.c.Interactions[landed]
	stream := note.Stream
	if stream == "" && note.Exchange != 0 && b.isListen(note.Exchange) {
		stream = "listen"
	}
	if landed >= before && stream != "" {
		// A message of its own on the GET stream or a listen stream.
		in.HTTP = &cassettes.HTTP{Stream: stream, Form: "sse"}
	}
	if note.HasEventID {
		h := httpOf(in)
		h.EventIDs = append(slices.Clip(h.EventIDs), note.EventID)
	}
	return completed
}

// exchangeOwner is the interaction that the server's messages on the
// exchange's response stream belong to: its first request still waiting for
// its response, else its first request; -1 for none.
func (b *builder) exchangeOwner(ex uint64) int {
	idxs := b.exchanges[ex]
	for _, i := range idxs {
		if b.c.Interactions[i].Request != nil && b.c.Interactions[i].Response == nil {
			return i
		}
	}
	for _, i := range idxs {
		if b.c.Interactions[i].Request != nil {
			return i
		}
	}
	return -1
}

// isListen reports whether the exchange is a subscriptions/listen request
// (2026-07-28), whose stream carries the session's change notifications.
func (b *builder) isListen(ex uint64) bool {
	for _, i := range b.exchanges[ex] {
		if m, err := jsonrpc.Parse(b.c.Interactions[i].Request); err == nil && m.Method == "subscriptions/listen" {
			return true
		}
	}
	return false
}

// httpResponse puts the response's status, form and headers on the
// interactions of the exchange. A request refused with a body that is not
// JSON-RPC will get no response: it stops being pending.
func (b *builder) httpResponse(note *HTTPNote) {
	if note.Status == 0 {
		// An event id with no message (a priming event).
		if i := b.exchangeOwner(note.Exchange); i >= 0 && note.HasEventID {
			h := httpOf(&b.c.Interactions[i])
			h.EventIDs = append(slices.Clip(h.EventIDs), note.EventID)
		}
		return
	}
	headers := note.ResponseHeaders
	if headers == nil && note.respHeader != nil {
		headers = recordedHeaders(note.respHeader)
	}
	for _, i := range b.exchanges[note.Exchange] {
		in := &b.c.Interactions[i]
		h := httpOf(in)
		h.Status, h.Form, h.ResponseHeaders, h.Body = note.Status, note.Form, headers, note.Body
		if note.Status >= 400 && note.Body != "" && in.Request != nil && in.Response == nil {
			for id, idx := range b.pending {
				if idx == i {
					delete(b.pending, id)
					b.pendingOrder = slices.DeleteFunc(b.pendingOrder, func(x jsonrpc.ID) bool { return x == id })
				}
			}
		}
	}
}

// httpOf returns the interaction's HTTP member, a fresh copy that may be
// changed (snapshots share the old one).
func httpOf(in *cassettes.Interaction) *cassettes.HTTP {
	h := &cassettes.HTTP{}
	if in.HTTP != nil {
		*h = *in.HTTP
	}
	in.HTTP = h
	return h
}
