package recorder

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/grow"
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

// enqueue queues o for the builder; for a message that must be saved
// before it is passed on (saveFirst), it returns once a save holds it.
func (r *Recorder) enqueue(o observed) {
	if r.saveFirst(&o) {
		o.saved = make(chan struct{})
	}
	r.qmu.Lock()
	if r.closed {
		r.qmu.Unlock()
		return
	}
	first := len(r.queue) == 0
	r.queue = append(grow.Slice(r.queue, 1), o)
	r.qmu.Unlock()
	if first {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	if o.saved != nil {
		<-o.saved
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
	before := b.base + len(b.c.Interactions)
	b.landed, b.hint, b.noOwner, b.listenSeen = -1, -1, false, false
	if from == cassettes.FromServer {
		switch {
		case note.Stream != "":
			b.noOwner = true
		case note.Exchange != 0:
			b.hint = b.exchangeOwner(note.Exchange)
		}
	}
	completed := b.add(from, data, at)
	landed, listen := b.landed, b.listenSeen
	b.landed, b.hint, b.noOwner, b.listenSeen = -1, -1, false, false

	if from == cassettes.FromClient {
		// The interactions that the POST opened carry its URL and headers.
		headers, u := note.RequestHeaders, note.URL
		if headers == nil && note.reqHeader != nil {
			headers = recordedHeaders(note.reqHeader)
		}
		if u == "" && note.reqURL != nil {
			u = recordedURL(note.reqURL)
		}
		// (A save may have taken some of a long batch out of memory in
		// between: those keep no HTTP member.)
		for i := max(before, b.base); i < b.base+len(b.c.Interactions); i++ {
			in := b.at(i)
			if in.From != cassettes.FromClient || in.Raw != nil {
				continue
			}
			in.HTTP = &cassettes.HTTP{URL: u, RequestHeaders: headers}
			if note.Exchange != 0 {
				b.openedBy(note.Exchange, i, in.Request != nil)
			}
		}
		if e := b.exchanges[note.Exchange]; e != nil && listen {
			e.listen = true
		}
		return completed
	}
	if landed < b.base {
		return completed
	}
	in := b.at(landed)
	stream := note.Stream
	if e := b.exchanges[note.Exchange]; stream == "" && e != nil && e.listen {
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

// openedBy notes that exchange ex opened interaction i (a request when
// req is set).
func (b *builder) openedBy(ex uint64, i int, req bool) {
	e := b.exchanges[ex]
	if e == nil {
		e = &exchange{firstReq: -1}
		b.exchanges[ex] = e
		b.exchangeOrder.push(ex)
	}
	e.idxs = append(e.idxs, i)
	if req && e.firstReq < 0 {
		e.firstReq = i
	}
}

// exchangeOwner is the interaction that the server's messages on the
// exchange's response stream belong to: its first request still waiting for
// its response, else its first request; -1 for none. Its requests are
// answered in any order, but once answered they stay so: the search goes on
// from where the last one stopped (a batch of N answered event by event
// costs O(N), not O(N²)).
func (b *builder) exchangeOwner(ex uint64) int {
	e := b.exchanges[ex]
	if e == nil {
		return -1
	}
	for ; e.next < len(e.idxs); e.next++ {
		if i := e.idxs[e.next]; i >= b.base {
			if in := b.at(i); in.Request != nil && in.Response == nil {
				return i
			}
		}
	}
	if e.firstReq < b.base {
		return -1
	}
	return e.firstReq
}

// httpResponse puts the response's status, form and headers on the
// interactions of the exchange. A request refused with a body that is not
// JSON-RPC will get no response: it stops being pending.
func (b *builder) httpResponse(note *HTTPNote) {
	if note.Status == 0 {
		// An event id with no message (a priming event).
		if i := b.exchangeOwner(note.Exchange); i >= 0 && note.HasEventID {
			h := httpOf(b.at(i))
			h.EventIDs = append(slices.Clip(h.EventIDs), note.EventID)
		}
		return
	}
	headers := note.ResponseHeaders
	if headers == nil && note.respHeader != nil {
		headers = recordedHeaders(note.respHeader)
	}
	e := b.exchanges[note.Exchange]
	if e == nil {
		return
	}
	for _, i := range e.idxs {
		if i < b.base {
			continue
		}
		in := b.at(i)
		h := httpOf(in)
		h.Status, h.Form, h.ResponseHeaders, h.Body = note.Status, note.Form, headers, note.Body
		if note.Status >= 400 && note.Body != "" && in.Request != nil && in.Response == nil {
			if msg, err := jsonrpc.Parse(in.Request); err == nil {
				if idx, ok := b.pending.get(msg.ID); ok && idx == i {
					b.pending.remove(msg.ID)
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
