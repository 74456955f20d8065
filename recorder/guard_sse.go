package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// The guard on the HTTP+SSE transport of 2024-11-05: the answers of the
// guard's go on the session's event stream, which its relay owns.

// guardStreams are the tap's GET event streams under a guard, by the tap's
// message endpoint (path?query) that their endpoint event announced
// (HTTP+SSE): a refusal, a timeout or a held call's answer is written on
// the stream of the endpoint that the call was posted to.
type guardStreams struct {
	mu         sync.Mutex // guards byEndpoint
	byEndpoint map[string]*guardedStream
}

func (g *guardStreams) get(endpoint string) *guardedStream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.byEndpoint[endpoint]
}

func (g *guardStreams) set(endpoint string, s *guardedStream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s == nil {
		delete(g.byEndpoint, endpoint)
		return
	}
	if g.byEndpoint == nil {
		g.byEndpoint = map[string]*guardedStream{}
	}
	g.byEndpoint[endpoint] = s
}

// endpointKey names a message endpoint of the tap.
func endpointKey(u *url.URL) string { return u.Path + "?" + u.RawQuery }

// guardedStream is a GET event stream under a guard: forwardSSE writes the
// server's events through it, and the guard its own messages between them.
// Its relay carries out the verdicts of its HTTP+SSE session (the held
// calls, their clocks, the guard's own requests upstream); they end with
// the stream.
type guardedStream struct {
	http.ResponseWriter
	t     *HTTP
	hdr   http.Header // the GET's, for the guard's own requests
	relay *relay[sseAt]

	mu       sync.Mutex // guards the ResponseWriter, closed, endpoint and post
	closed   bool
	endpoint string // the tap's message endpoint (HTTP+SSE), also the guard's session; "" on Streamable HTTP
	post     string // where the session's messages go upstream
}

// sseAt is what the ends of a guarded stream's relay know of a message:
// where the session's messages go upstream and with which headers, and,
// while the client's POST that carries the message waits for its answer,
// that POST.
type sseAt struct {
	url  string
	hdr  http.Header
	post *messagePOST
}

// messagePOST is a client's POST to the message endpoint of HTTP+SSE while
// its handler runs: the client's message that it carries goes upstream on
// it, and the server's answer to it comes back on it; once its handler has
// answered (done), the session's messages go upstream on POSTs of the
// tap's own, and the guard's answers on the event stream only.
type messagePOST struct {
	w    http.ResponseWriter
	r    *http.Request
	body []byte
	ex   uint64

	mu       sync.Mutex // guards answered, done and queued
	answered bool
	done     bool
	queued   [][]byte // the guard's messages for the stream, until the POST is answered
}

// guardSSE wraps the writer of a GET event stream for the guard; end
// withdraws the held calls, stops the clocks and waits for the stream's
// work. Without a guard it returns w as it is.
func (t *HTTP) guardSSE(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	if t.guard == nil || r.Method != http.MethodGet {
		return w, func() {}
	}
	s := &guardedStream{ResponseWriter: w, t: t, hdr: r.Header.Clone(), post: t.target(r).String()}
	s.relay = newRelay(r.Context(), t.guard, relayEnds[sseAt]{toClient: s.toClient, toServer: s.toServer})
	return s, s.end
}

// guardEndpoint notes the message endpoint that an endpoint event
// (HTTP+SSE), already rewritten to point at the tap, announces on the
// stream w: the POSTs to it belong to this stream.
func (t *HTTP) guardEndpoint(w http.ResponseWriter, data []byte) {
	s, ok := w.(*guardedStream)
	if !ok {
		return
	}
	u, err := url.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return
	}
	key := endpointKey(u)
	up := t.target(&http.Request{URL: &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}}).String()
	s.mu.Lock()
	s.endpoint, s.post = key, up
	s.mu.Unlock()
	t.gstreams.set(key, s)
}

// guardStream passes a server message of a GET stream through the
// guard's relay; nil drops it. A request of the guard's own that it asks
// for goes upstream on the stream's session.
func (t *HTTP) guardStream(w http.ResponseWriter, data []byte) []byte {
	if t.guard == nil {
		return data
	}
	s, _ := w.(*guardedStream)
	if s == nil {
		return t.guard.FromServer("", bytes.TrimSpace(data)).Forward
	}
	return s.relay.passServer(s.at(), s.session(), bytes.TrimSpace(data))
}

func (s *guardedStream) session() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// at is where the session's messages go upstream.
func (s *guardedStream) at() sseAt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sseAt{url: s.post, hdr: s.hdr}
}

func (s *guardedStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, http.ErrHandlerTimeout
	}
	return s.ResponseWriter.Write(p)
}

// FlushError flushes the stream (http.ResponseController calls it).
func (s *guardedStream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return http.ErrHandlerTimeout
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// toClient writes a message of the guard's on the stream (relay.go); one
// about the message of a POST still waiting for its answer waits for that
// answer (the POST is answered first, as by a server).
func (s *guardedStream) toClient(at sseAt, msg []byte, _ bool) error {
	if at.post != nil && at.post.queue(msg) {
		return nil
	}
	return s.deliver(msg)
}

// deliver writes a message of the guard's on the stream, and records it as
// a server message of the stream.
func (s *guardedStream) deliver(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.t.log.Warn(fmt.Sprintf("guard: the event stream has ended; not delivered: %s", msg))
		return http.ErrHandlerTimeout
	}
	s.t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(msg), s.t.rec.now(), HTTPNote{})
	s.ResponseWriter.Write(jsonrpc.AppendEvent(nil, jsonrpc.Event{Type: "message", Data: msg}))
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// toServer sends a message upstream (relay.go): the client's on its own
// POST while that waits, else on a POST of the tap's; the guard's own
// requests on a goroutine of the relay's, which gives their answers to the
// guard.
func (s *guardedStream) toServer(at sseAt, msg []byte, own bool) error {
	if !own && at.post != nil {
		if handled, err := at.post.forward(s.t, msg); handled {
			return err
		}
	}
	if own && isRequest(msg) {
		s.relay.goDo(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, ownRequestTimeout)
			defer cancel()
			s.t.ownRequest(ctx, at.url, at.hdr, s.session(), msg)
		})
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.relay.ctx), 10*time.Second)
	defer cancel()
	s.t.postDiscard(ctx, at.url, at.hdr, msg)
	return nil
}

func (s *guardedStream) end() {
	s.mu.Lock()
	s.closed = true
	endpoint := s.endpoint
	s.mu.Unlock()
	if endpoint != "" && s.t.gstreams.get(endpoint) == s {
		s.t.gstreams.set(endpoint, nil)
	}
	s.relay.close()
}

// queue keeps a message for the event stream until the POST is
// answered; false once it has been.
func (p *messagePOST) queue(msg []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	p.queued = append(p.queued, msg)
	return true
}

// finish answers the POST 202 if nothing has, ends its use by the relay
// (its handler returns), and writes the messages it kept on the stream s.
func (p *messagePOST) finish(s *guardedStream) {
	p.mu.Lock()
	if !p.answered {
		s.t.rec.ObserveHTTPResponse(HTTPNote{Exchange: p.ex, Status: http.StatusAccepted, Form: "none"}, s.t.rec.now())
		p.w.WriteHeader(http.StatusAccepted)
	}
	p.answered, p.done = true, true
	queued := p.queued
	p.queued = nil
	p.mu.Unlock()
	for _, m := range queued {
		s.deliver(m)
	}
}

// forward sends the client's message msg upstream on the POST, and gives
// the client the server's answer to it; handled is false once the POST's
// handler has returned. The error says that the server did not take the
// message (no answer, or an HTTP error status): none will come on the
// stream.
func (p *messagePOST) forward(t *HTTP, msg []byte) (handled bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false, nil
	}
	p.answered = true
	resp, err := t.forward(p.r.Context(), p.r, msg)
	if err != nil {
		if p.r.Context().Err() == nil {
			t.log.Warn(fmt.Sprintf("upstream %s: %v", t.shown, err))
			badGateway(p.w, p.body, fmt.Errorf("the upstream server %s did not answer: %w", t.shown, err))
		}
		return true, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, int64(t.max)))
	note := HTTPNote{Exchange: p.ex, Status: resp.StatusCode, Form: formOf(resp), ResponseHeaders: recordedHeaders(resp.Header)}
	if len(bytes.TrimSpace(data)) > 0 {
		note.Body = string(data)
	}
	t.rec.ObserveHTTPResponse(note, t.rec.now())
	copyHeaders(p.w.Header(), resp.Header)
	p.w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	p.w.WriteHeader(resp.StatusCode)
	p.w.Write(data)
	if resp.StatusCode >= 300 {
		return true, fmt.Errorf("the upstream server %s answered %s", t.shown, resp.Status)
	}
	return true, nil
}

// guardMessagePOST is guardPOST for the message endpoint of HTTP+SSE,
// whose answers travel on the event stream s: its relay carries out the
// verdict. A forwarded message gets the server's own answer to the POST;
// otherwise the POST is answered 202 as a server would, and the guard's
// refusals, its answers to calls that time out, and the decisions of held
// calls go on the stream with the request's id.
func (t *HTTP) guardMessagePOST(w http.ResponseWriter, r *http.Request, body []byte, ex uint64, s *guardedStream) {
	p := &messagePOST{w: w, r: r, body: body, ex: ex}
	s.relay.fromClient(sseAt{url: t.target(r).String(), hdr: r.Header.Clone(), post: p}, s.session(), bytes.TrimSpace(body))
	p.finish(s)
}
