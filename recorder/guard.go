package recorder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// The guard's relay ends on stdio and on Streamable HTTP (HTTP+SSE is in
// guard_sse.go, the bridges' ends in bridge_client.go and
// bridge_server.go), and the guard's own POSTs upstream.

// stdioRelay is the relay of the guarded stdio tap: lines to the child's
// stdin and to the client's stdout. (A line is one Write: pipes and
// *os.File do not interleave concurrent Writes, and lockedWriter
// serializes the rest.)
func stdioRelay(ctx context.Context, f Filter, toServer io.Writer, toClient *lockedWriter, rec *Recorder) *relay[struct{}] {
	server := &lockedWriter{w: toServer}
	return newRelay(ctx, f, relayEnds[struct{}]{
		toClient: func(_ struct{}, msg []byte, _ bool) error {
			rec.Observe(cassettes.FromServer, msg, rec.now())
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
	jsonrpc.PumpLines(clientIn, func(line []byte) error {
		msg := append([]byte(nil), line...)
		rec.Observe(cassettes.FromClient, msg, rec.now())
		rl.fromClient(struct{}{}, "", msg)
		return nil
	}, &jsonrpc.PumpOptions{Max: maxLine, TooLong: func(*jsonrpc.LineTooLongError) error {
		// Not passed on: the guard cannot see what it holds.
		rec.Observe(cassettes.FromClient, fmt.Appendf(nil, "[mcpmock: a line of more than %d bytes from the client was dropped by the guard]", maxLine), rec.now())
		return nil
	}})
}

// guardServerLines reads the server's messages and gives them to the relay,
// which passes on (and records) what the guard lets through.
func guardServerLines(serverOut io.Reader, rl *relay[struct{}], rec *Recorder, maxLine int) {
	jsonrpc.PumpLines(serverOut, func(line []byte) error {
		return rl.fromServer(struct{}{}, "", append([]byte(nil), line...))
	}, &jsonrpc.PumpOptions{Max: maxLine, TooLong: func(*jsonrpc.LineTooLongError) error {
		rec.Observe(cassettes.FromServer, fmt.Appendf(nil, "[mcpmock: a line of more than %d bytes from the server was dropped by the guard]", maxLine), rec.now())
		return nil
	}})
}

// guardPOST forwards one client POST through the guard's relay. A POST to
// the message endpoint of HTTP+SSE goes to guardMessagePOST. On Streamable
// HTTP the POST's response carries every answer (streamablePOST): a
// refusal is answered at once (200 with the JSON-RPC answer), a held call
// waits for its decision on the POST's goroutine, the server's messages on
// the response (JSON or SSE) pass through the guard, and the refusals of a
// partly refused batch join the server's answers. A call that times out is
// answered on the same response and cancelled upstream with a POST of
// notifications/cancelled.
func (t *HTTP) guardPOST(w http.ResponseWriter, r *http.Request, body []byte, ex uint64) {
	streamable := r.URL.Path == "/mcp"
	if !streamable {
		if s := t.gstreams.get(endpointKey(r.URL)); s != nil {
			t.guardMessagePOST(w, r, body, ex, s)
			return
		}
	}
	p := &streamablePOST{t: t, w: w, r: r, body: body, ex: ex, streamable: streamable}
	if streamable {
		// Each POST carries its own answers: its exchange keeps ids of
		// different clients and sessions apart.
		p.session = fmt.Sprintf("post-%d", ex)
	}
	p.relay = newRelay(r.Context(), t.guard, relayEnds[struct{}]{toClient: p.toClient, toServer: p.toServer})
	// Closed once answered, after the guard's own requests that the
	// answers asked for.
	defer p.relay.close()
	p.relay.answer(struct{}{}, p.session, bytes.TrimSpace(body))
	p.finish()
}

// streamablePOST is a client's POST on Streamable HTTP (or to a message
// endpoint whose event stream the tap has not seen) under a guard: the
// ends of its relay. Only the POST's goroutine writes its response; the
// relay's clock hands it the answer of a call that timed out.
type streamablePOST struct {
	t          *HTTP
	w          http.ResponseWriter
	r          *http.Request
	body       []byte
	ex         uint64
	session    string
	streamable bool
	relay      *relay[struct{}]

	mu       sync.Mutex // guards the fields below
	state    guardedPOSTState
	refusals []byte             // the guard's answer before the forward
	expiry   []byte             // the guard's answer to calls that timed out, not written yet
	cancel   context.CancelFunc // of the forward upstream
}

// guardedPOSTState is how far a guarded POST has got.
type guardedPOSTState int

const (
	postIdle       guardedPOSTState = iota // not forwarded
	postForwarding                         // forwarded, the answer not written
	postDone                               // answered
)

// toClient takes an answer of the guard's (relay.go): before the forward,
// the refusals that go ahead of the server's answers or instead of them;
// during it, the answer to calls that timed out, which cuts the forward.
func (p *streamablePOST) toClient(_ struct{}, msg []byte, _ bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case postIdle:
		p.refusals = msg
	case postForwarding:
		p.expiry = msg
		p.cancel()
	default:
		p.t.log.Warn(fmt.Sprintf("guard: the POST was answered already; not delivered: %s", msg))
	}
	return nil
}

// toServer sends a message upstream (relay.go): the client's on the POST,
// a request of the guard's own on a goroutine of the relay's (which gives
// its answer to the guard), a notifications/cancelled on a POST of its own.
func (p *streamablePOST) toServer(_ struct{}, msg []byte, own bool) error {
	switch {
	case !own:
		return p.forward(msg)
	case isRequest(msg):
		p.relay.goDo(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ownRequestTimeout)
			defer cancel()
			p.t.ownRequest(ctx, p.t.target(p.r).String(), p.r.Header, p.session, msg)
		})
	default:
		p.t.postUpstream(p.r, msg)
	}
	return nil
}

// takeExpiry returns the answer to calls that timed out, once.
func (p *streamablePOST) takeExpiry() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.expiry
	p.expiry = nil
	return c
}

// finish answers a POST that was not forwarded: with the guard's refusal,
// or 202 when there is none (a dropped notification).
func (p *streamablePOST) finish() {
	p.mu.Lock()
	state, refusals := p.state, p.refusals
	p.state = postDone
	p.mu.Unlock()
	if state != postIdle {
		return
	}
	t, w, ex := p.t, p.w, p.ex
	switch {
	case refusals == nil:
		w.WriteHeader(http.StatusAccepted)
	case !p.streamable:
		// A message endpoint whose event stream the tap has not seen.
		http.Error(w, "mcpmock guard refused the message: "+string(refusals), http.StatusForbidden)
	default:
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, t.rec.now())
		t.rec.ObserveHTTP(cassettes.FromServer, refusals, t.rec.now(), HTTPNote{Exchange: ex})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(refusals)
	}
}

// forward sends the client's message (as the guard passed it) upstream on
// the POST and answers the POST with what comes back, through the guard:
// the server's messages, the refusals of a partly refused batch, the
// answer to calls that timed out.
func (p *streamablePOST) forward(msg []byte) error {
	t, w, r, ex := p.t, p.w, p.r, p.ex
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	p.mu.Lock()
	p.state, p.cancel = postForwarding, cancel
	refusals := p.refusals
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.state = postDone
		p.mu.Unlock()
	}()
	if refusals != nil && !p.streamable {
		t.log.Warn("guard: a batch was partly refused on a message endpoint whose event stream the tap has not seen; its refusals are not delivered")
		refusals = nil
	}
	// expireJSON answers in JSON, before the server did, the calls that
	// timed out (and the refusals).
	expireJSON := func() bool {
		c := p.takeExpiry()
		if c == nil {
			return false
		}
		if refusals != nil {
			c = joinAnswers(c, refusals)
		}
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, t.rec.now())
		t.rec.ObserveHTTP(cassettes.FromServer, c, t.rec.now(), HTTPNote{Exchange: ex})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Del("Content-Length")
		w.WriteHeader(http.StatusOK)
		w.Write(c)
		return true
	}
	resp, err := t.forward(ctx, r, msg)
	if err != nil {
		if expireJSON() || r.Context().Err() != nil {
			return nil
		}
		t.log.Warn(fmt.Sprintf("upstream %s: %v", t.shown, err))
		badGateway(w, p.body, fmt.Errorf("the upstream server %s did not answer: %w", t.shown, err))
		return err
	}
	defer resp.Body.Close()
	form := formOf(resp)
	copyHeaders(w.Header(), resp.Header)
	if form == "sse" {
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}, t.rec.now())
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		var buf []byte
		if refusals != nil {
			// The refusals of a partly refused batch, as one batch event
			// before the server's answers.
			t.rec.ObserveHTTP(cassettes.FromServer, refusals, t.rec.now(), HTTPNote{Exchange: ex})
			buf = jsonrpc.AppendEvent(buf, jsonrpc.Event{Data: refusals})
			w.Write(buf)
		}
		flush(w)
		scope := t.events.scope(r, resp, ex)
		sr := jsonrpc.NewSSEReader(resp.Body, t.max)
		for {
			ev, err := sr.Next()
			if err != nil || ev.TooLong {
				if c := p.takeExpiry(); c != nil {
					t.rec.ObserveHTTP(cassettes.FromServer, c, t.rec.now(), HTTPNote{Exchange: ex})
					w.Write(jsonrpc.AppendEvent(nil, jsonrpc.Event{Data: c}))
					flush(w)
				}
				return nil
			}
			if ev.Data != nil && (ev.Type == "" || ev.Type == "message") && !jsonrpc.NoMessage(ev.Data) {
				fwd := p.relay.passServer(struct{}{}, p.session, bytes.TrimSpace(ev.Data))
				if fwd == nil {
					continue
				}
				ev.Data = fwd
				t.recordEvent(r, ev, ex, "", scope)
			} else if ev.HasID {
				t.recordEvent(r, ev, ex, "", scope)
			}
			buf = jsonrpc.AppendEvent(buf[:0], ev)
			if _, err := w.Write(buf); err != nil {
				return nil
			}
			flush(w)
		}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil && expireJSON() {
		return nil
	}
	note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}
	trimmed := bytes.TrimSpace(data)
	isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	switch {
	case isJSON:
		data = p.relay.passServer(struct{}{}, p.session, trimmed)
		if c := p.takeExpiry(); c != nil {
			// The clock ran out as the answer came: the calls it
			// answered are not in the server's answer (the guard dropped
			// their late answers).
			data = joinAnswers(data, c)
		}
		if refusals != nil {
			data = joinAnswers(data, refusals)
		}
	case refusals != nil && resp.StatusCode < 300:
		// The server had nothing to answer (the batch's forwarded part
		// was notifications): the refusals are the answer.
		data = refusals
		isJSON = true
		note.Status, note.Form = http.StatusOK, "json"
		resp.StatusCode = http.StatusOK
		w.Header().Set("Content-Type", "application/json")
	case len(trimmed) > 0:
		note.Body = string(data)
	}
	t.rec.ObserveHTTPResponse(note, t.rec.now())
	if isJSON && data != nil && len(data) <= t.max {
		t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(data), t.rec.now(), HTTPNote{Exchange: ex})
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
	return nil
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
	resp, err := t.client.Do(out)
	return resp, cassettes.RedactURLError(err)
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
	resp, err := t.client.Do(out)
	return resp, cassettes.RedactURLError(err)
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
			t.log.Warn(fmt.Sprintf("guard: sending %s upstream: %v", msg, err))
		}
		return
	}
	if resp.StatusCode >= 300 {
		t.log.Warn(fmt.Sprintf("guard: sending %s upstream: %s", msg, resp.Status))
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
				t.log.Warn(fmt.Sprintf("guard: the guard's own %s upstream: %v", msg, err))
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
				t.log.Warn(fmt.Sprintf("guard: the guard's own %s upstream: %s", msg, resp.Status))
			}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		msg = next
	}
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
