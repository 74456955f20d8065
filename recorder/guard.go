package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Interceptor decides what passes through a tap (package guard implements
// it; the command adapts it). With an Interceptor the tap is no longer
// transparent, and the cassette records the conversation as the client saw
// it: the client's messages as it sent them, and the answers as they reached
// it (the interceptor's own refusals and replacements included). Messages
// that only the server saw (a notifications/cancelled of a timed-out call)
// and answers the client never got (a late answer after a timeout, a
// tools/list before its denied tools were removed) are not recorded, so that
// replaying the cassette reproduces the guarded server.
type Interceptor interface {
	// FromClient decides about a message from the client; session keeps
	// request ids of different clients apart.
	FromClient(session string, msg []byte) Verdict
	// FromServer decides about a message from the server.
	FromServer(session string, msg []byte) Verdict
}

// Verdict is what an Interceptor decided about one message. A zero Verdict
// drops it.
type Verdict struct {
	// Forward is the message to pass on, as it came or changed.
	Forward []byte
	// Reply is an answer to the message's sender instead of passing it on.
	Reply []byte
	// Hold, when set, is called (it may block until a person answers) and
	// its Verdict carried out instead.
	Hold func(ctx context.Context) Verdict
	// Timeout and Expire: when Timeout passes after Forward went out,
	// Expire returns what to send the client and the server, or nils.
	Timeout time.Duration
	Expire  func() (toClient, toServer []byte)
	// ToServer is a request of the interceptor's own for the server (a
	// tools/list after list_changed); its answer comes back through
	// FromServer. Neither is recorded.
	ToServer []byte
}

// guardClientLines reads the client's messages, records each as the client
// sent it, and carries out the interceptor's verdicts: forwarding to the
// server, answering the client (and recording the answer), waiting for a
// person without stopping the other messages, timing out calls. It returns
// at the client's EOF, after the held calls are withdrawn and the timers
// stopped.
func guardClientLines(ctx context.Context, clientIn io.Reader, toServer io.Writer, toClient io.Writer, rec *Recorder, ic Interceptor, maxLine int) {
	server := &lockedWriter{w: toServer}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup // the held calls
	var tmu sync.Mutex    // guards timers
	timers := map[*time.Timer]bool{}
	defer func() {
		cancel()
		wg.Wait()
		tmu.Lock()
		for t := range timers {
			t.Stop()
		}
		tmu.Unlock()
	}()
	reply := func(msg []byte) {
		rec.Observe(cassettes.FromServer, msg, time.Now())
		toClient.Write(append(msg[:len(msg):len(msg)], '\n'))
	}
	var apply func(v Verdict)
	apply = func(v Verdict) {
		switch {
		case v.Hold != nil:
			wg.Add(1)
			go func() {
				defer wg.Done()
				apply(v.Hold(ctx))
			}()
		case v.Reply != nil:
			reply(v.Reply)
		}
		if v.ToServer != nil {
			server.Write(append(v.ToServer[:len(v.ToServer):len(v.ToServer)], '\n'))
		}
		if v.Forward == nil {
			return
		}
		if v.Timeout > 0 && v.Expire != nil {
			var t *time.Timer
			t = time.AfterFunc(v.Timeout, func() {
				tmu.Lock()
				delete(timers, t)
				tmu.Unlock()
				c, s := v.Expire()
				if s != nil {
					server.Write(append(s[:len(s):len(s)], '\n'))
				}
				if c != nil {
					reply(c)
				}
			})
			tmu.Lock()
			timers[t] = true
			tmu.Unlock()
		}
		server.Write(append(v.Forward[:len(v.Forward):len(v.Forward)], '\n'))
	}
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
		apply(ic.FromClient("", msg))
	}
}

// guardServerLines reads the server's messages and passes on (and records)
// what the interceptor lets through; the interceptor's own requests go to
// toServer, unrecorded. (A line is one Write: pipes and *os.File do not
// interleave concurrent Writes, so this shares toServer with
// guardClientLines.)
func guardServerLines(serverOut io.Reader, toServer, toClient io.Writer, rec *Recorder, ic Interceptor, maxLine int) {
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
		v := ic.FromServer("", append([]byte(nil), line...))
		if v.ToServer != nil {
			toServer.Write(append(v.ToServer[:len(v.ToServer):len(v.ToServer)], '\n'))
		}
		if v.Forward == nil {
			continue
		}
		rec.Observe(cassettes.FromServer, v.Forward, time.Now())
		if _, err := toClient.Write(append(v.Forward[:len(v.Forward):len(v.Forward)], '\n')); err != nil {
			return
		}
	}
}

// guardPOST forwards one client POST through the interceptor: a refusal is
// answered at once (200 with the JSON-RPC answer on Streamable HTTP, 403 on
// the message endpoint of HTTP+SSE, whose answers travel on the GET
// stream), a held call waits for its decision, and the server's messages on
// the POST's response (JSON or SSE) pass through FromServer. A call that
// times out is answered on the same response and cancelled upstream with a
// POST of notifications/cancelled.
func (t *HTTP) guardPOST(w http.ResponseWriter, r *http.Request, body []byte, ex uint64) {
	streamable := r.URL.Path == "/mcp"
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
	if v.Reply != nil {
		t.log.Warn("mcpmock guard: a batch was partly refused; over HTTP its refusals are not delivered")
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
	// upstream; it reports whether there was anything to answer.
	expire := func(write func([]byte)) bool {
		if !expired.Load() {
			return false
		}
		c, s := v.Expire()
		if s != nil {
			t.postUpstream(r, s)
		}
		if c == nil {
			return false
		}
		t.rec.ObserveHTTP(cassettes.FromServer, c, time.Now(), HTTPNote{Exchange: ex})
		write(c)
		return true
	}
	writeJSON := func(msg []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Del("Content-Length")
		w.WriteHeader(http.StatusOK)
		w.Write(msg)
	}

	out, err := http.NewRequestWithContext(ctx, r.Method, t.target(r).String(), bytes.NewReader(v.Forward))
	if err != nil {
		badGateway(w, body, err)
		return
	}
	copyHeaders(out.Header, r.Header)
	out.Header.Del("Accept-Encoding")
	out.ContentLength = int64(len(v.Forward))
	resp, err := t.client.Do(out)
	if err != nil {
		if expire(func(c []byte) {
			t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, time.Now())
			writeJSON(c)
		}) || r.Context().Err() != nil {
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
		flush(w)
		sr := jsonrpc.NewSSEReader(resp.Body, t.max)
		var buf []byte
		for {
			ev, err := sr.Next()
			if err != nil || ev.TooLong {
				expire(func(c []byte) {
					w.Write(jsonrpc.AppendEvent(nil, jsonrpc.Event{Data: c}))
					flush(w)
				})
				return
			}
			if ev.Data != nil && (ev.Type == "" || ev.Type == "message") {
				fv := t.guard.FromServer(session, bytes.TrimSpace(ev.Data))
				if fv.Forward == nil {
					continue
				}
				ev.Data = fv.Forward
				t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(fv.Forward), time.Now(), HTTPNote{Exchange: ex, EventID: ev.ID, HasEventID: ev.HasID})
			} else if ev.HasID && ev.Data == nil {
				t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, EventID: ev.ID, HasEventID: true}, time.Now())
			}
			buf = jsonrpc.AppendEvent(buf[:0], ev)
			if _, err := w.Write(buf); err != nil {
				return
			}
			flush(w)
		}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil && expire(func(c []byte) {
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: http.StatusOK, Form: "json"}, time.Now())
		writeJSON(c)
	}) {
		return
	}
	note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}
	trimmed := bytes.TrimSpace(data)
	isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	if isJSON {
		fv := t.guard.FromServer(session, trimmed)
		data = fv.Forward
	} else if len(trimmed) > 0 {
		note.Body = string(data)
	}
	t.rec.ObserveHTTPResponse(note, time.Now())
	if isJSON && data != nil && len(data) <= t.max {
		t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(data), time.Now(), HTTPNote{Exchange: ex})
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// postUpstream sends a notification upstream on the client's session (its
// headers), for a call the guard cancelled; the answer is discarded.
func (t *HTTP) postUpstream(r *http.Request, msg []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, t.target(r).String(), bytes.NewReader(msg))
	if err != nil {
		return
	}
	copyHeaders(out.Header, r.Header)
	out.Header.Del("Accept-Encoding")
	out.Header.Set("Content-Type", "application/json")
	out.ContentLength = int64(len(msg))
	resp, err := t.client.Do(out)
	if err != nil {
		t.log.Warn(fmt.Sprintf("mcpmock guard: sending %s upstream: %v", msg, err))
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// guardStream passes a server message of a GET stream through the
// interceptor; nil drops it.
func (t *HTTP) guardStream(data []byte) []byte {
	if t.guard == nil {
		return data
	}
	return t.guard.FromServer("", bytes.TrimSpace(data)).Forward
}
