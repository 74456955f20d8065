package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// HTTPOptions configure the HTTP tap. The zero value (or nil) is the
// default.
type HTTPOptions struct {
	// Client sends the requests upstream; nil means a client with no
	// timeout (streams are long) that does not follow redirects.
	Client *http.Client
	// Logger receives the tap's warnings; nil means silent. (The live log
	// of the messages is the Recorder's.)
	Logger *slog.Logger
	// MaxMessage is the longest message body or SSE event the tap handles;
	// 0 means jsonrpc.DefaultMaxLine (64 MiB). A longer POST body is
	// forwarded but not recorded; a longer SSE event ends the stream.
	MaxMessage int
	// Guard, if set, decides what passes (guard.go); nil forwards all.
	Guard Filter
	// MaxBodyBytes bounds a request body: a longer one is refused with 413
	// and a JSON-RPC error, and neither forwarded nor recorded. 0 means
	// httpguard.DefaultMaxBodyBytes (64 MiB, the default of the command's
	// --max-body-bytes); a negative value means no bound (for a listener
	// that bounds bodies itself, as the command's does).
	MaxBodyBytes int64
}

// HTTP is the HTTP tap: an http.Handler that forwards every request to an
// upstream MCP server (Streamable HTTP, or the HTTP+SSE transport of
// 2024-11-05) and every response back, and lets a Recorder observe the
// messages with how they travelled (status, form, SSE event ids, the headers
// that matter).
//
// Paths: /mcp goes to the upstream URL; /sse to the upstream URL if its path
// ends in /sse, else to /sse on the upstream's origin; any other path (the
// message endpoint of HTTP+SSE, /.well-known/...) to the same path on the
// upstream's origin. An `endpoint` event of HTTP+SSE is rewritten to point
// at the tap. SSE responses are forwarded event by event as they arrive,
// each event flushed at once.
type HTTP struct {
	upstream *url.URL
	shown    string // the upstream URL as messages and errors show it (cassettes.RedactURL)
	sseURL   *url.URL
	rec      *Recorder
	client   *http.Client
	log      *slog.Logger
	max      int
	maxBody  int64
	guard    Filter
	gstreams guardStreams // guard.go: the event streams the guard answers on
	events   *eventLog    // http_echo.go: the event ids recorded, to tell echoes

	exchanges atomic.Uint64

	mu        sync.Mutex      // guards endpoints, streams and closed
	endpoints map[string]bool // paths announced by endpoint events
	streams   map[uint64]context.CancelFunc
	closed    bool
}

// NewHTTP returns a tap forwarding to the MCP server at upstream (an
// http or https URL).
func NewHTTP(upstream string, rec *Recorder, opts *HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("recorder: upstream %q is not an http(s) URL", upstream)
	}
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.Client == nil {
		o.Client = defaultClient()
	}
	if o.Logger == nil {
		o.Logger = livelog.Discard
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = jsonrpc.DefaultMaxLine
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = httpguard.DefaultMaxBodyBytes
	}
	t := &HTTP{upstream: u, shown: cassettes.RedactURL(u.String()), rec: rec, client: o.Client, log: o.Logger, max: o.MaxMessage, maxBody: o.MaxBodyBytes, guard: o.Guard, events: newEventLog(), endpoints: map[string]bool{}, streams: map[uint64]context.CancelFunc{}}
	t.sseURL = u
	if !strings.HasSuffix(u.Path, "/sse") {
		t.sseURL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/sse"}
	}
	return t, nil
}

// defaultClient keeps up to 64 idle HTTP/1.1 connections to the upstream
// (net/http's default is 2, too few for a client with many requests in
// flight), and asks for no compression: the tap forwards the bytes as they
// come and reads the messages in clear.
func defaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.DisableCompression = true
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// target is where a request to the tap goes upstream.
func (t *HTTP) target(r *http.Request) *url.URL {
	switch r.URL.Path {
	case "/mcp":
		u := *t.upstream
		if r.URL.RawQuery != "" {
			u.RawQuery = r.URL.RawQuery
		}
		return &u
	case "/sse":
		u := *t.sseURL
		if r.URL.RawQuery != "" {
			u.RawQuery = r.URL.RawQuery
		}
		return &u
	}
	return &url.URL{Scheme: t.upstream.Scheme, Host: t.upstream.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
}

// isMCP reports whether messages on this path are MCP messages to record.
func (t *HTTP) isMCP(path string) bool {
	if path == "/mcp" || path == "/sse" {
		return true
	}
	if strings.HasPrefix(path, "/.well-known/") {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.endpoints[path]
}

// ServeHTTP forwards one request and its response.
func (t *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := t.exchanges.Add(1)
	mcp := t.isMCP(r.URL.Path)
	if mcp && r.Method == http.MethodPost {
		defer t.rec.endExchange(ex) // for the contract checks (contract.go)
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody && r.Method != http.MethodGet && r.Method != http.MethodHead {
		var ok bool
		if body, ok = t.readBody(w, r); !ok {
			return
		}
	}
	if mcp && r.Method == http.MethodPost && len(body) > 0 {
		// Record the client's message before it is forwarded, so that it
		// comes before its answer. The body is only read from now on, so
		// the recording shares it; its headers and URL are filtered on the
		// recorder's goroutine.
		data := bytes.TrimSpace(body)
		if len(data) > t.max {
			data = fmt.Appendf(nil, "[mcpmock: a body of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", len(data), t.max)
		} else if t.guard != nil {
			data = bytes.Clone(data)
		}
		t.rec.ObserveHTTP(cassettes.FromClient, data, t.rec.now(), HTTPNote{Exchange: ex, reqHeader: r.Header, reqURL: r.URL})
		if t.guard != nil {
			t.guardPOST(w, r, body, ex) // guard.go
			return
		}
	}

	if r.Method == http.MethodDelete {
		t.events.end(r)
	}
	ctx := r.Context()
	if r.Method == http.MethodGet {
		// A GET stream lasts until the client or the server ends it, or
		// CloseStreams.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			http.Error(w, "mcpmock: the tap is shutting down", http.StatusServiceUnavailable)
			return
		}
		t.streams[ex] = cancel
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			delete(t.streams, ex)
			t.mu.Unlock()
		}()
	}
	out := t.outRequest(ctx, r, body)
	resp, err := t.client.Do(out)
	err = cassettes.RedactURLError(err) // it names the upstream URL
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		t.log.Warn(fmt.Sprintf("upstream %s: %v", t.shown, err))
		badGateway(w, body, fmt.Errorf("the upstream server %s did not answer: %w", t.shown, err))
		return
	}
	defer resp.Body.Close()

	form := formOf(resp)
	if form == "sse" {
		copyHeaders(w.Header(), resp.Header)
		w.Header().Del("Content-Length")
		if mcp {
			t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, respHeader: resp.Header}, t.rec.now())
		}
		if !mcp || (t.guard == nil && r.URL.Path != "/sse") {
			// No endpoint event to rewrite, no guard: the bytes pass as
			// they come, and the events are read on the side for the
			// recording.
			t.forwardRaw(w, r, resp, ex, mcp)
			return
		}
		w.WriteHeader(resp.StatusCode)
		flush(w)
		t.forwardSSE(w, r, resp, ex)
		return
	}
	// A JSON body, a 202 or an error: one message at most, read whole if
	// it is within the message limit, else passed on as it comes.
	data, err := readAll(io.LimitReader(resp.Body, int64(t.max)+1), min(resp.ContentLength, int64(t.max)+1))
	if err == nil && len(data) > t.max {
		t.forwardLong(w, r, resp, data, ex, mcp, form)
		return
	}
	if err != nil {
		// The upstream went away in the middle of its answer (it crashed or
		// restarted): the client gets a clear error, not half a body.
		if r.Context().Err() != nil {
			return
		}
		t.log.Warn(fmt.Sprintf("upstream %s: reading its answer: %v", t.shown, err))
		badGateway(w, body, fmt.Errorf("the upstream server %s broke off its answer (HTTP %d): %w", t.shown, resp.StatusCode, err))
		return
	}
	if mcp {
		note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, respHeader: resp.Header}
		trimmed := bytes.TrimSpace(data)
		isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
		if len(trimmed) > 0 && !isJSON {
			note.Body = string(data)
		}
		t.rec.ObserveHTTPResponse(note, t.rec.now())
		if isJSON && len(trimmed) <= t.max {
			// data is only written from now on: the recording shares it.
			t.rec.ObserveHTTP(cassettes.FromServer, trimmed, t.rec.now(), HTTPNote{Exchange: ex})
		}
	}
	copyHeaders(w.Header(), resp.Header)
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(data))}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// forwardLong passes on an answer past the message limit, of which start
// was read: its headers, start, then the rest as it comes, so that the
// tap holds no more than the limit of it. The cassette gets a note of its
// size in its place, and the log a warning.
func (t *HTTP) forwardLong(w http.ResponseWriter, r *http.Request, resp *http.Response, start []byte, ex uint64, mcp bool, form string) {
	size := fmt.Sprintf("more than %d bytes", t.max)
	if resp.ContentLength > 0 {
		size = fmt.Sprintf("%d bytes", resp.ContentLength)
	}
	t.log.Warn(fmt.Sprintf("an answer of %s from the upstream %s (%s %s) is over the message limit of %d bytes: it is passed on as it comes, and not recorded", size, t.shown, r.Method, r.URL.Path, t.max))
	if mcp {
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, respHeader: resp.Header}, t.rec.now())
		t.rec.ObserveHTTP(cassettes.FromServer, fmt.Appendf(nil, "[mcpmock: an answer of %s passed; it is over the recording limit of %d bytes and was not kept]", size, t.max), t.rec.now(), HTTPNote{Exchange: ex})
	}
	copyHeaders(w.Header(), resp.Header)
	delete(w.Header(), "Content-Length")
	if resp.ContentLength > 0 {
		w.Header()["Content-Length"] = []string{strconv.FormatInt(resp.ContentLength, 10)}
	}
	w.WriteHeader(resp.StatusCode)
	if _, err := w.Write(start); err != nil {
		return
	}
	if _, err := io.Copy(w, resp.Body); err != nil && r.Context().Err() == nil {
		// Too late for a 502: the client sees the answer broken off.
		t.log.Warn(fmt.Sprintf("upstream %s: passing on its answer: %v", t.shown, err))
		panic(http.ErrAbortHandler)
	}
}

// readBody reads the request's body within MaxBodyBytes, or answers 413
// (or 400) and reports false.
func (t *HTTP) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if b, ok := httpguard.Bytes(r); ok && (t.maxBody <= 0 || int64(len(b)) <= t.maxBody) {
		return b, true // read by the guard in front: no second copy
	}
	src := r.Body
	if t.maxBody > 0 {
		if r.ContentLength > t.maxBody {
			tooLarge(w, t.maxBody)
			return nil, false
		}
		src = http.MaxBytesReader(w, r.Body, t.maxBody)
	}
	body, err := readAll(src, r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge(w, mbe.Limit)
			return nil, false
		}
		rpcError(w, http.StatusBadRequest, "Bad Request: reading the body: "+err.Error())
		return nil, false
	}
	return body, true
}

// tooLarge answers 413 with a JSON-RPC error, as the command's listener
// does, and closes the connection (the rest of the body is not read).
func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	rpcError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", limit))
}

// rpcError answers status with a JSON-RPC error of code -32000 (a server
// error) and a null id, which MCP clients show better than a plain text.
func rpcError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(jsonrpc.ErrorResponse(jsonrpc.ID("null"), &jsonrpc.Error{Code: -32000, Message: msg}), '\n'))
}

// readAll reads r to its end; hint, when known (a Content-Length), sizes
// the buffer so that a body is read without growing it.
func readAll(r io.Reader, hint int64) ([]byte, error) {
	if hint <= 0 || hint > 16<<20 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, hint+1) // +1: the end is seen without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// outRequest is the request to forward upstream: the client's method,
// body and headers (without the hop-by-hop ones and Accept-Encoding: the
// tap reads the messages in clear) to the target URL. Its body can be
// sent again, so that the transport retries it on a kept-alive connection
// that the upstream closed (a restart).
func (t *HTTP) outRequest(ctx context.Context, r *http.Request, body []byte) *http.Request {
	out := (&http.Request{
		Method:     r.Method,
		URL:        t.target(r),
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header, len(r.Header)),
		Host:       t.upstream.Host,
	}).WithContext(ctx)
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
		if len(body) == 0 {
			out.Body, out.GetBody = http.NoBody, nil
		}
	}
	copyHeaders(out.Header, r.Header)
	delete(out.Header, "Accept-Encoding")
	return out
}

// forwardSSE copies an event stream to the client event by event, records
// the messages, and rewrites an endpoint event to point at the tap.
func (t *HTTP) forwardSSE(w http.ResponseWriter, r *http.Request, resp *http.Response, ex uint64) {
	w, endGuard := t.guardSSE(w, r) // guard.go: the guard's answers share the stream
	defer endGuard()
	stream := ""
	if r.Method == http.MethodGet {
		stream = "get"
	}
	scope := t.events.scope(r, resp, ex)
	sr := jsonrpc.NewSSEReader(resp.Body, t.max)
	var buf []byte
	for {
		ev, err := sr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				t.log.Warn(fmt.Sprintf("the upstream event stream ended: %v", err))
			}
			return
		}
		if ev.TooLong {
			t.log.Error(fmt.Sprintf("an SSE event of %d bytes is over the limit of %d bytes; the stream is cut", ev.Size, t.max))
			return
		}
		switch {
		case ev.Type == "endpoint" && ev.Data != nil:
			ev.Data = t.rewriteEndpoint(r, ev.Data)
			t.guardEndpoint(w, ev.Data) // guard.go
		case ev.Data != nil && (ev.Type == "" || ev.Type == "message") && !jsonrpc.NoMessage(ev.Data):
			// (A priming event's data is no message: the guard does not
			// see it.)
			if ev.Data = t.guardStream(w, ev.Data); ev.Data == nil {
				continue
			}
			t.recordEvent(r, ev, ex, stream, scope)
		case ev.HasID:
			t.recordEvent(r, ev, ex, stream, scope)
		}
		buf = jsonrpc.AppendEvent(buf[:0], ev)
		if _, err := w.Write(buf); err != nil {
			return
		}
		flush(w)
	}
}

// sseBufs are the read buffers of the event streams the tap forwards.
var sseBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// headerFlushDelay is how long the headers of a POST's event stream wait
// for its first event, to go out in the same write; then they go alone.
const headerFlushDelay = 20 * time.Millisecond

// forwardRaw copies an event stream to the client as it arrives, each read
// written and flushed at once, as a bare reverse proxy does, and, when
// record is set, feeds a decoder on the side to record the messages (each
// before the bytes that carry it reach the client, so that the cassette
// has it before any answer to it). The headers of a GET stream are flushed
// at once; those of a POST's stream go with its first event, or alone
// after headerFlushDelay.
func (t *HTTP) forwardRaw(w http.ResponseWriter, r *http.Request, resp *http.Response, ex uint64, record bool) {
	w.WriteHeader(resp.StatusCode)
	var sent func() // marks the headers as written; nil once they are
	if r.Method == http.MethodGet {
		flush(w)
	} else {
		var mu sync.Mutex
		done := false
		timer := time.AfterFunc(headerFlushDelay, func() {
			mu.Lock()
			defer mu.Unlock()
			if !done {
				done = true
				flush(w)
			}
		})
		sent = func() {
			timer.Stop()
			mu.Lock()
			done = true
			mu.Unlock()
		}
		defer func() {
			if sent != nil {
				sent()
			}
		}()
	}
	stream := ""
	if r.Method == http.MethodGet {
		stream = "get"
	}
	bp := sseBufs.Get().(*[]byte)
	defer sseBufs.Put(bp)
	buf := *bp
	var d *jsonrpc.SSEDecoder
	scope := ""
	if record {
		d = jsonrpc.NewSSEDecoder(t.max)
		scope = t.events.scope(r, resp, ex)
	}
	var evs []jsonrpc.Event
	for {
		n, err := resp.Body.Read(buf)
		if d != nil {
			evs = d.Feed(evs[:0], buf[:n])
			if err != nil {
				if ev, ok := d.Flush(); ok {
					evs = append(evs, ev)
				}
			}
			// An event past the limit ends the stream as soon as it is
			// past it, before this read is passed on: the client never
			// gets more than the limit and a read of it, and what the
			// client got and the cassette hold stay the same.
			if d.Over() || slices.ContainsFunc(evs, func(ev jsonrpc.Event) bool { return ev.TooLong }) {
				t.log.Error(fmt.Sprintf("an SSE event from the upstream %s is over the message limit of %d bytes; the stream to the client is cut there", t.shown, t.max))
				return
			}
			for _, ev := range evs {
				t.recordEvent(r, ev, ex, stream, scope)
			}
		}
		if n > 0 {
			if sent != nil {
				sent()
				sent = nil
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			flush(w)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				t.log.Warn(fmt.Sprintf("the upstream event stream ended: %v", err))
			}
			return
		}
	}
}

// recordEvent records the message of an SSE event of the given scope
// (eventLog.scope), or the id of a priming event. Transport echoes are not
// messages: an event that was already recorded in its scope (a server
// re-sends it on a resumed stream) is not recorded again, and an event
// whose data is no JSON-RPC message (none, blank, {}) is a priming event.
func (t *HTTP) recordEvent(r *http.Request, ev jsonrpc.Event, ex uint64, stream, scope string) {
	if ev.Type != "" && ev.Type != "message" {
		return
	}
	if ev.HasID && ev.ID != "" && !t.events.first(scope, ev.ID, ev.Data) {
		return // an echo: forwarded, already recorded
	}
	switch {
	case ev.Data != nil && !jsonrpc.NoMessage(ev.Data):
		note := HTTPNote{Exchange: ex, Stream: stream, EventID: ev.ID, HasEventID: ev.HasID}
		if stream == "get" && r.URL.Path == "/sse" {
			// On HTTP+SSE every server message comes on the stream.
			note.Stream, note.Exchange = "", 0
		}
		t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(bytes.TrimSpace(ev.Data)), t.rec.now(), note)
	case ev.HasID && stream == "":
		// A priming event: an id for resumption, no message.
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, EventID: ev.ID, HasEventID: true}, t.rec.now())
	}
}

// rewriteEndpoint makes the endpoint of HTTP+SSE point at the tap: the
// same path and query, on the tap's host.
func (t *HTTP) rewriteEndpoint(r *http.Request, data []byte) []byte {
	ref, err := url.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return data
	}
	abs := t.target(r).ResolveReference(ref)
	if abs.Host != t.upstream.Host {
		return data // another server: leave it
	}
	t.mu.Lock()
	t.endpoints[abs.Path] = true
	t.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	tap := url.URL{Scheme: scheme, Host: r.Host, Path: abs.Path, RawPath: abs.RawPath, RawQuery: abs.RawQuery}
	return []byte(tap.String())
}

// formOf says how a response carries its message.
func formOf(resp *http.Response) string {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		return "sse"
	case resp.ContentLength == 0 || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return "none"
	case ct == "application/json":
		return "json"
	}
	return "none"
}

func flush(w http.ResponseWriter) {
	http.NewResponseController(w).Flush()
}

// badGateway answers 502 with a JSON-RPC error for the request in body (or
// with a null id).
func badGateway(w http.ResponseWriter, body []byte, err error) {
	id := jsonrpc.ID("null")
	if msg, perr := jsonrpc.Parse(bytes.TrimSpace(body)); perr == nil && msg.Kind() == jsonrpc.KindRequest {
		id = msg.ID
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	w.Write(jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpmock: " + err.Error()}))
}

// CloseStreams ends the GET streams in progress and refuses new ones, so
// that an http.Server's Shutdown does not wait for them; POSTs in flight go
// on.
func (t *HTTP) CloseStreams() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, cancel := range t.streams {
		cancel()
	}
}
