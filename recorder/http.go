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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
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
	Guard Interceptor
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
	sseURL   *url.URL
	rec      *Recorder
	client   *http.Client
	log      *slog.Logger
	max      int
	guard    Interceptor
	gstreams guardStreams // guard.go: the event streams the guard answers on

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
	t := &HTTP{upstream: u, rec: rec, client: o.Client, log: o.Logger, max: o.MaxMessage, guard: o.Guard, endpoints: map[string]bool{}, streams: map[uint64]context.CancelFunc{}}
	t.sseURL = u
	if !strings.HasSuffix(u.Path, "/sse") {
		t.sseURL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/sse"}
	}
	return t, nil
}

func defaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
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
	var body []byte
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		var err error
		body, err = io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "mcpmock: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	if mcp && r.Method == http.MethodPost && len(body) > 0 {
		// Record the client's message before it is forwarded, so that it
		// comes before its answer.
		data := bytes.TrimSpace(body)
		if len(data) > t.max {
			data = fmt.Appendf(nil, "[mcpmock: a body of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", len(data), t.max)
		} else {
			data = bytes.Clone(data)
		}
		t.rec.ObserveHTTP(cassettes.FromClient, data, time.Now(), HTTPNote{Exchange: ex, RequestHeaders: recordedHeaders(r.Header)})
		if t.guard != nil {
			t.guardPOST(w, r, body, ex) // guard.go
			return
		}
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
	out, err := http.NewRequestWithContext(ctx, r.Method, t.target(r).String(), bytes.NewReader(body))
	if err != nil {
		badGateway(w, body, err)
		return
	}
	if body == nil {
		out.Body = nil
	}
	copyHeaders(out.Header, r.Header)
	// Go's client asks for gzip itself and decodes it: the tap must see
	// the messages in clear.
	out.Header.Del("Accept-Encoding")
	out.ContentLength = int64(len(body))
	resp, err := t.client.Do(out)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		t.log.Warn(fmt.Sprintf("mcpmock: upstream %s: %v", t.upstream.Redacted(), err))
		badGateway(w, body, fmt.Errorf("the upstream server %s did not answer: %w", t.upstream.Redacted(), err))
		return
	}
	defer resp.Body.Close()

	form := formOf(resp)
	copyHeaders(w.Header(), resp.Header)
	if mcp && form == "sse" {
		t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}, time.Now())
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		flush(w)
		t.forwardSSE(w, r, resp.Body, ex)
		return
	}
	// A JSON body, a 202 or an error: one message at most, read whole.
	data, err := io.ReadAll(resp.Body)
	if mcp {
		note := HTTPNote{Exchange: ex, Status: resp.StatusCode, Form: form, ResponseHeaders: recordedHeaders(resp.Header)}
		trimmed := bytes.TrimSpace(data)
		isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
		if len(trimmed) > 0 && !isJSON {
			note.Body = string(data)
		}
		t.rec.ObserveHTTPResponse(note, time.Now())
		if isJSON && len(trimmed) <= t.max {
			t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(trimmed), time.Now(), HTTPNote{Exchange: ex})
		}
	}
	if err != nil {
		t.log.Warn(fmt.Sprintf("mcpmock: reading the upstream response: %v", err))
	}
	w.Header().Del("Content-Length")
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// forwardSSE copies an event stream to the client event by event, records
// the messages, and rewrites an endpoint event to point at the tap.
func (t *HTTP) forwardSSE(w http.ResponseWriter, r *http.Request, body io.Reader, ex uint64) {
	w, endGuard := t.guardSSE(w, r) // guard.go: the guard's answers share the stream
	defer endGuard()
	stream := ""
	if r.Method == http.MethodGet {
		stream = "get"
	}
	sr := jsonrpc.NewSSEReader(body, t.max)
	var buf []byte
	for {
		ev, err := sr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				t.log.Warn(fmt.Sprintf("mcpmock: the upstream event stream ended: %v", err))
			}
			return
		}
		if ev.TooLong {
			t.log.Error(fmt.Sprintf("mcpmock: an SSE event of %d bytes is over the limit of %d bytes; the stream is cut", ev.Size, t.max))
			return
		}
		switch {
		case ev.Type == "endpoint" && ev.Data != nil:
			ev.Data = t.rewriteEndpoint(r, ev.Data)
			t.guardEndpoint(w, ev.Data) // guard.go
		case ev.Data != nil && (ev.Type == "" || ev.Type == "message"):
			if ev.Data = t.guardStream(w, ev.Data); ev.Data == nil {
				continue
			}
			note := HTTPNote{Exchange: ex, Stream: stream, EventID: ev.ID, HasEventID: ev.HasID}
			if stream == "get" && r.URL.Path == "/sse" {
				// On HTTP+SSE every server message comes on the stream.
				note.Stream, note.Exchange = "", 0
			}
			t.rec.ObserveHTTP(cassettes.FromServer, bytes.Clone(bytes.TrimSpace(ev.Data)), time.Now(), note)
		case ev.HasID && ev.Data == nil:
			// A priming event: an id for resumption, no message.
			if stream == "" {
				t.rec.ObserveHTTPResponse(HTTPNote{Exchange: ex, EventID: ev.ID, HasEventID: true}, time.Now())
			}
		}
		buf = jsonrpc.AppendEvent(buf[:0], ev)
		if _, err := w.Write(buf); err != nil {
			return
		}
		flush(w)
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
