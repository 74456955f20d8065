package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// stdioRelay is the relay of the guarded stdio tap: lines to the child's
// stdin and to the client's stdout. (A line is one Write: pipes and
// *os.File do not interleave concurrent Writes, and lockedWriter
// serializes the rest.)
func stdioRelay(ctx context.Context, f Filter, toServer io.Writer, toClient *lockedWriter, rec *Recorder) *relay[struct{}] {
	server := &lockedWriter{w: toServer}
	return newRelay(ctx, f, relayEnds[struct{}]{
		toClient: func(_ struct{}, msg []byte, _ bool) error {
			rec.Observe(cassettes.FromServer, msg, time.Now())
			_, err := toClient.Write(append(msg[:len(msg):len(msg)], '\n'))
			return err
		},
		toServer: func(_ struct{}, msg []byte, _ bool) error {
			_, err := server.Write(append(msg[:len(msg):len(msg)], '\n'))
			return err
		},
	})
}

// guardClientLines reads the client's messages, records each as the client
// sent it, and gives it to the relay. It returns at the client's EOF, after
// the relay has withdrawn the held calls and stopped the clocks.
func guardClientLines(clientIn io.Reader, rl *relay[struct{}], rec *Recorder, maxLine int) {
	defer rl.close()
	lr := jsonrpc.NewLineReader(clientIn, maxLine)
	for {
		line, err := lr.ReadLine()
		var tooLong *jsonrpc.LineTooLongError
		if errors.As(err, &tooLong) {
			// Not passed on: the guard cannot see what it holds.
			rec.Observe(cassettes.FromClient, fmt.Appendf(nil, "[mcpmock: a line of more than %d bytes from the client was dropped by the guard]", maxLine), time.Now())
			continue
		}
		if err != nil {
			return
		}
		msg := append([]byte(nil), line...)
		rec.Observe(cassettes.FromClient, msg, time.Now())
		rl.fromClient(struct{}{}, "", msg)
	}
}

// guardServerLines reads the server's messages and gives them to the relay,
// which passes on (and records) what the guard lets through.
func guardServerLines(serverOut io.Reader, rl *relay[struct{}], rec *Recorder, maxLine int) {
	lr := jsonrpc.NewLineReader(serverOut, maxLine)
	for {
		line, err := lr.ReadLine()
		var tooLong *jsonrpc.LineTooLongError
		if errors.As(err, &tooLong) {
			rec.Observe(cassettes.FromServer, fmt.Appendf(nil, "[mcpmock: a line of more than %d bytes from the server was dropped by the guard]", maxLine), time.Now())
			continue
		}
		if err != nil {
			return
		}
		if rl.fromServer(struct{}{}, "", append([]byte(nil), line...)) != nil {
			return
		}
	}
}

// guardPOST forwards one client POST through the interceptor. On Streamable
// HTTP a refusal is answered at once (200 with the JSON-RPC answer), a held
// call waits for its decision, and the server's messages on the POST's
// response (JSON or SSE) pass through FromServer; the refusals of a partly
// refused batch join the server's answers. A call that times out is
// answered on the same response and cancelled upstream with a POST of
// notifications/cancelled. A POST to the message endpoint of HTTP+SSE goes
// to guardMessagePOST.
func (t *HTTP) guardPOST(w http.ResponseWriter, r *http.Request, body []byte, ex uint64) {
	streamable := r.URL.Path == "/mcp"
	if !streamable {
		if s := t.gstreams.get(endpointKey(r.URL)); s != nil {
			t.guardMessagePOST(w, r, body, ex, s)
			return
		}
	}
	session := ""
	if streamable {
		// Each POST carries its own answers: its exchange keeps ids of
		// different clients and sessions apart.
		session = fmt.Sprintf("post-%d", ex)
	}
	v := t.guard.FromClient(session, bytes.TrimSpace(body))
	if v.Hold != nil {
		v = v.Hold(r.Context())
	}
	if v.Forward == nil {
		if v.Reply == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if !streamable {
			// A message endpoint whose event stream the tap has not seen.
			http.Error(w, "mcpmock guard refused the message: "+string(v.Reply), http.StatusForbidden)
			return
		}
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, time.Now())
		t.rec.ObserveHTTP(cassettes.FromServer, v.Reply, time.Now(), HTTPNote{Exchange: ex})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(v.Reply)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var expired atomic.Bool
	if streamable && v.Timeout > 0 && v.Expire != nil {
		timer := time.AfterFunc(v.Timeout, func() {
			expired.Store(true)
			cancel()
		})
		defer timer.Stop()
	}
	// expire answers the client instead of the server and cancels the call
	// upstream (the calls of a batch that the server has not answered);
	// it reports whether there was anything to answer. withRefusals joins
	// the refusals of a partly refused batch to the answer, when they
	// have not gone ahead of it.
	expire := func(withRefusals bool, write func([]byte)) bool {
		if !expired.Load() {
			return false
		}
		c, ss := v.Expire()
		for _, s := range ss {
			t.postUpstream(r, s)
		}
		if c == nil {
			return false
		}
		if withRefusals && v.Reply != nil {
			c = joinAnswers(c, v.Reply)
		}
		t.rec.ObserveHTTP(cassettes.FromServer, c, time.Now(), HTTPNote{Exchange: ex})
		write(c)
		return true
	}
	// expireJSON answers in JSON, before the server did.
	expireJSON := func() bool {
		return expire(true, func(c []byte) {
			t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, time.Now())
			w.Header().Set("Content-Type", "application/json")
			w.Header().Del("Content-Length")
			w.WriteHeader(http.StatusOK)
			w.Write(c)
		})
	}
	// A request of the guard's own that the server's answer asks for (a
	// tools/list after list_changed, which may come on a long-lived
	// subscriptions/listen stream) goes upstream at once, beside the
	// answer; the POST's handler waits for it.
	var ownWG sync.WaitGroup
	defer ownWG.Wait()
	own := func(msg []byte) {
		if msg == nil {
			return
		}
		ownWG.Add(1)
		go func() {
			defer ownWG.Done()
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), ownRequestTimeout)
			defer cancel()
			t.ownRequest(ctx, t.target(r).String(), r.Header, session, msg)
		}()
	}

	resp, err := t.forward(ctx, r, v.Forward)
	if err != nil {
		if expireJSON() || r.Context().Err() != nil {
			return
		}
		t.log.Warn(fmt.Sprintf("mcpmock: upstream %s: %v", t.upstream.Redacted(), err))
		badGateway(w, body, fmt.Errorf("the upstream server %s did not answer: %w", t.upstream.Redacted(), err))
		return
	}
	defer resp.Body.Close()
	form := formOf(resp)
	copyHeaders(w.Header(), resp.Header)
	if form == "sse" {
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}, time.Now())
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		var buf []byte
		if v.Reply != nil && streamable {
			// The refusals of a partly refused batch, as one batch event
			// before the server's answers.
			t.rec.ObserveHTTP(cassettes.FromServer, v.Reply, time.Now(), HTTPNote{Exchange: ex})
			buf = jsonrpc.AppendEvent(buf, jsonrpc.Event{Data: v.Reply})
			w.Write(buf)
		}
		flush(w)
		scope := t.events.scope(r, resp, ex)
		sr := jsonrpc.NewSSEReader(resp.Body, t.max)
		for {
			ev, err := sr.Next()
			if err != nil || ev.TooLong {
				expire(false, func(c []byte) {
					w.Write(jsonrpc.AppendEvent(nil, jsonrpc.Event{Data: c}))
					flush(w)
				})
				return
			}
			if ev.Data != nil && (ev.Type == "" || ev.Type == "message") && !jsonrpc.NoMessage(ev.Data) {
				fv := t.guard.FromServer(session, bytes.TrimSpace(ev.Data))
				own(fv.ToServer)
				if fv.Forward == nil {
					continue
				}
				ev.Data = fv.Forward
				t.recordEvent(r, ev, ex, "", scope)
			} else if ev.HasID {
				t.recordEvent(r, ev, ex, "", scope)
			}
			buf = jsonrpc.AppendEvent(buf[:0], ev)
			if _, err := w.Write(buf); err != nil {
				return
			}
			flush(w)
		}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil && expireJSON() {
		return
	}
	note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}
	trimmed := bytes.TrimSpace(data)
	isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	switch {
	case isJSON:
		fv := t.guard.FromServer(session, trimmed)
		own(fv.ToServer)
		data = fv.Forward
		if v.Reply != nil && streamable {
			data = joinAnswers(data, v.Reply)
		}
	case v.Reply != nil && streamable && resp.StatusCode < 300:
		// The server had nothing to answer (the batch's forwarded part
		// was notifications): the refusals are the answer.
		data = v.Reply
		isJSON = true
		note.Status, note.Form = http.StatusOK, "json"
		resp.StatusCode = http.StatusOK
		w.Header().Set("Content-Type", "application/json")
	case len(trimmed) > 0:
		note.Body = string(data)
	}
	if v.Reply != nil && !streamable {
		t.log.Warn("mcpmock guard: a batch was partly refused on a message endpoint whose event stream the tap has not seen; its refusals are not delivered")
	}
	t.rec.ObserveHTTPResponse(note, time.Now())
	if isJSON && data != nil && len(data) <= t.max {
		t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(data), time.Now(), HTTPNote{Exchange: ex})
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// forward sends the client's POST upstream with msg, the body that the
// guard lets through.
func (t *HTTP) forward(ctx context.Context, r *http.Request, msg []byte) (*http.Response, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, t.target(r).String(), bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	copyHeaders(out.Header, r.Header)
	out.Header.Del("Accept-Encoding")
	out.ContentLength = int64(len(msg))
	return t.client.Do(out)
}

// joinAnswers joins the server's answer (a message or a batch) and the
// guard's refusals (a batch) into one batch.
func joinAnswers(server, refusals []byte) []byte {
	var all [][]byte
	for _, part := range [][]byte{server, refusals} {
		if elems, _, err := jsonrpc.SplitBatch(part); err == nil {
			for _, e := range elems {
				all = append(all, e)
			}
		} else if len(bytes.TrimSpace(part)) > 0 {
			all = append(all, part)
		}
	}
	return jsonrpc.JoinBatch(all)
}

// ownRequestTimeout bounds a request of the guard's own upstream.
const ownRequestTimeout = 30 * time.Second

// postMessage POSTs one message to url with the headers of the client's
// request or stream (hdr), as the client would.
func (t *HTTP) postMessage(ctx context.Context, url string, hdr http.Header, msg []byte) (*http.Response, error) {
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	copyHeaders(out.Header, hdr)
	out.Header.Del("Accept-Encoding")
	out.Header.Del(mcp.HeaderLastEventID)
	// The client's Mcp-Method, Mcp-Name and Mcp-Param-* headers describe
	// its own message; msg gets its own (2026-07-28 servers check them
	// against the body), and the Mcp-Protocol-Version of its _meta.
	for name := range out.Header {
		if name == mcp.HeaderMethod || name == mcp.HeaderName || strings.HasPrefix(name, mcp.HeaderParamPrefix) {
			out.Header.Del(name)
		}
	}
	if m, err := jsonrpc.Parse(msg); err == nil {
		mcp.SetRequestHeaders(out.Header, m, "")
	}
	out.Header.Set("Content-Type", "application/json")
	out.Header.Set("Accept", "application/json, text/event-stream")
	out.ContentLength = int64(len(msg))
	return t.client.Do(out)
}

// postUpstream sends a notification upstream on the client's session (its
// headers), for a call the guard cancelled; the answer is discarded.
func (t *HTTP) postUpstream(r *http.Request, msg []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	t.postDiscard(ctx, t.target(r).String(), r.Header, msg)
}

// postDiscard POSTs msg and discards the answer.
func (t *HTTP) postDiscard(ctx context.Context, url string, hdr http.Header, msg []byte) {
	resp, err := t.postMessage(ctx, url, hdr, msg)
	if err != nil {
		if ctx.Err() == nil {
			t.log.Warn(fmt.Sprintf("mcpmock guard: sending %s upstream: %v", msg, err))
		}
		return
	}
	if resp.StatusCode >= 300 {
		t.log.Warn(fmt.Sprintf("mcpmock guard: sending %s upstream: %s", msg, resp.Status))
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// ownRequest sends a request of the guard's own upstream on a session (the
// headers of one of its client's requests or streams) and gives the
// server's messages on its answer to FromServer, which keeps them; it
// follows the further requests that FromServer asks for (the next page).
// On HTTP+SSE the answer comes on the event stream instead (guardStream).
func (t *HTTP) ownRequest(ctx context.Context, url string, hdr http.Header, session string, msg []byte) {
	for msg != nil {
		resp, err := t.postMessage(ctx, url, hdr, msg)
		if err != nil {
			if ctx.Err() == nil {
				t.log.Warn(fmt.Sprintf("mcpmock guard: the guard's own %s upstream: %v", msg, err))
			}
			return
		}
		var next []byte
		take := func(m []byte) {
			if v := t.guard.FromServer(session, bytes.TrimSpace(m)); v.ToServer != nil {
				next = v.ToServer
			}
		}
		switch formOf(resp) {
		case "sse":
			sr := jsonrpc.NewSSEReader(resp.Body, t.max)
			for {
				ev, err := sr.Next()
				if err != nil || ev.TooLong {
					break
				}
				if ev.Data != nil && (ev.Type == "" || ev.Type == "message") {
					take(ev.Data)
				}
			}
		case "json":
			if data, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.max))); err == nil {
				take(data)
			}
		default:
			if resp.StatusCode >= 300 {
				t.log.Warn(fmt.Sprintf("mcpmock guard: the guard's own %s upstream: %s", msg, resp.Status))
			}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		msg = next
	}
}

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

	mu       sync.Mutex // guards answered and done
	answered bool
	done     bool
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

// toClient writes a message of the guard's on the stream, and records it
// as a server message of the stream (relay.go). A POST still waiting for
// its answer is answered 202 first, as a server would.
func (s *guardedStream) toClient(at sseAt, msg []byte, _ bool) error {
	if at.post != nil {
		at.post.accept(s.t.rec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.t.log.Warn(fmt.Sprintf("mcpmock guard: the event stream has ended; not delivered: %s", msg))
		return http.ErrHandlerTimeout
	}
	s.t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(msg), time.Now(), HTTPNote{})
	s.ResponseWriter.Write(jsonrpc.AppendEvent(nil, jsonrpc.Event{Type: "message", Data: msg}))
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// toServer sends a message upstream (relay.go): the client's on its own
// POST while that waits, else on a POST of the tap's; the guard's own
// requests on a goroutine of the relay's, which gives their answers to the
// guard.
func (s *guardedStream) toServer(at sseAt, msg []byte, own bool) error {
	if !own && at.post != nil && at.post.forward(s.t, msg) {
		return nil
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

// isRequest reports whether msg is a request or a batch (the guard's own
// messages are requests, or the notifications/cancelled of its clocks).
func isRequest(msg []byte) bool {
	if _, batch, err := jsonrpc.SplitBatch(msg); err == nil && batch {
		return true
	}
	m, err := jsonrpc.Parse(msg)
	return err == nil && m.Kind() == jsonrpc.KindRequest
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

// accept answers the POST 202 unless it has been answered.
func (p *messagePOST) accept(rec *Recorder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accepted(rec)
}

func (p *messagePOST) accepted(rec *Recorder) {
	if p.answered || p.done {
		return
	}
	p.answered = true
	rec.ObserveHTTPResponse(HTTPNote{Exchange: p.ex, Status: http.StatusAccepted, Form: "none"}, time.Now())
	p.w.WriteHeader(http.StatusAccepted)
}

// finish answers the POST 202 if nothing has, and ends its use by the
// relay: its handler returns.
func (p *messagePOST) finish(rec *Recorder) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accepted(rec)
	p.done = true
}

// forward sends the client's message msg upstream on the POST, and gives
// the client the server's answer to it; false once the POST's handler
// has returned or answered.
func (p *messagePOST) forward(t *HTTP, msg []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered || p.done {
		return false
	}
	p.answered = true
	resp, err := t.forward(p.r.Context(), p.r, msg)
	if err != nil {
		if p.r.Context().Err() == nil {
			t.log.Warn(fmt.Sprintf("mcpmock: upstream %s: %v", t.upstream.Redacted(), err))
			badGateway(p.w, p.body, fmt.Errorf("the upstream server %s did not answer: %w", t.upstream.Redacted(), err))
		}
		return true
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, int64(t.max)))
	note := HTTPNote{Exchange: p.ex, Status: resp.StatusCode, Form: formOf(resp), ResponseHeaders: recordedHeaders(resp.Header)}
	if len(bytes.TrimSpace(data)) > 0 {
		note.Body = string(data)
	}
	t.rec.ObserveHTTPResponse(note, time.Now())
	copyHeaders(p.w.Header(), resp.Header)
	p.w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	p.w.WriteHeader(resp.StatusCode)
	p.w.Write(data)
	return true
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
	p.finish(t.rec)
}
