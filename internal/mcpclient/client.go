// Package mcpclient is the client side of MCP's HTTP transports: Streamable
// HTTP, and the HTTP+SSE transport of 2024-11-05. It posts the caller's
// messages as they are (one message or a batch, bytes unchanged) and hands
// back each message of the answer, with where it came from (the POST's
// answer, a resumed stream, the GET stream, the HTTP+SSE stream) and its
// SSE event id, so that a recorder can record the wire as it was.
//
// A Client keeps what the transport asks a client to keep: the session id
// (Mcp-Session-Id), the protocol version that initialize agreed on
// (MCP-Protocol-Version, and the Mcp-Method and Mcp-Name headers of
// 2026-07-28), and the caller's own headers (authorization). It resumes an
// event stream that was cut before its answers came (GET with
// Last-Event-ID, after the server's retry delay), opens the GET stream for
// the server's own messages (Listen), and ends the session with DELETE
// (Close). Every message is bounded by Options.MaxMessage.
//
//	c := mcpclient.New("http://localhost:8080/mcp", nil)
//	defer c.Close()
//	err := c.Post(ctx, initialize, &mcpclient.Handler{
//		Message: func(m mcpclient.Message) bool { fmt.Printf("%s\n", m.Data); return false },
//	})
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Transport is the HTTP transport that a Client speaks. The zero value is
// Auto.
type Transport int

const (
	// Auto speaks Streamable HTTP, and falls back to HTTP+SSE as the
	// specification's backwards-compatibility section says: when the
	// first initialize POST is answered 400, 404 or 405, the Client opens
	// an event stream with GET at the same URL and, if the server sends an
	// endpoint event on it, speaks HTTP+SSE from then on.
	Auto Transport = iota
	// Streamable speaks Streamable HTTP only.
	Streamable
	// SSE speaks the HTTP+SSE transport of 2024-11-05: the URL is the SSE
	// endpoint; messages are posted to the URL of its endpoint event and
	// answered on the stream.
	SSE
)

// Options configure a Client. The zero value (or nil) is the default.
type Options struct {
	// Client makes the HTTP requests; nil means a client of the package's
	// own without timeouts (its idle connections are closed by Close).
	Client *http.Client
	// Header is added to every request (authorization, say); the
	// transport's own headers win over it.
	Header http.Header
	// MaxMessage is the longest message (a JSON body, an SSE event's
	// data); 0 means jsonrpc.DefaultMaxLine. A longer answer is not read:
	// its exchange fails with ErrTooLong.
	MaxMessage int
	// Transport is the transport spoken; the zero value is Auto.
	Transport Transport
	// Resumes is how many times in a row a cut event stream is resumed
	// with Last-Event-ID without getting past the event it named; 0 means
	// 5, a negative value never.
	Resumes int
	// MaxRetry caps the wait that a server's SSE retry field asks for
	// before a stream is resumed; 0 means 30 seconds.
	MaxRetry time.Duration
}

// Client is a client of one MCP server over HTTP. Its methods are safe for
// concurrent use. Create one with New.
type Client struct {
	url     *url.URL
	http    *http.Client
	own     bool // http is the package's own: Close closes its idle connections
	header  http.Header
	max     int
	resumes int
	maxWait time.Duration

	mu        sync.Mutex // guards the fields below
	transport Transport  // Auto until the first answer decides
	session   string
	version   string
	legacy    *legacyStream // the HTTP+SSE stream, once open
	closed    bool

	openMu sync.Mutex // serialises the opening of the HTTP+SSE stream
}

// New returns a client of the server at rawURL (http or https). No request
// is sent yet.
func New(rawURL string, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcpclient: %q is not an http or https URL", rawURL)
	}
	c := &Client{url: u, http: o.Client, header: o.Header.Clone(), max: o.MaxMessage, resumes: o.Resumes, maxWait: o.MaxRetry, transport: o.Transport}
	if c.http == nil {
		c.http, c.own = &http.Client{}, true
	}
	if c.max <= 0 {
		c.max = jsonrpc.DefaultMaxLine
	}
	if c.resumes == 0 {
		c.resumes = 5
	}
	if c.maxWait <= 0 {
		c.maxWait = 30 * time.Second
	}
	return c, nil
}

// URL returns the server's URL, its password redacted, as errors name it.
func (c *Client) URL() string { return cassettes.RedactURL(c.url.String()) }

// Session returns the session id that the server gave ("" for none).
func (c *Client) Session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Version returns the protocol version that initialize agreed on ("" until
// then).
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Transport returns the transport spoken: Options.Transport, or for Auto
// the one the first initialize found (Auto until then).
func (c *Client) Transport() Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transport
}

// Form says how an HTTP answer carries its messages.
type Form string

// The forms of an answer.
const (
	FormJSON Form = "json" // an application/json body: one message or a batch
	FormSSE  Form = "sse"  // a text/event-stream
	FormNone Form = "none" // no message (202, 204, an empty or other body)
)

// Stream names where a message came from.
type Stream string

// The streams of a message.
const (
	StreamPost Stream = ""    // the answer to a POST, or its resumption
	StreamGet  Stream = "get" // the GET stream (Listen) or its resumption
	StreamSSE  Stream = "sse" // the event stream of the HTTP+SSE transport
)

// Answer is the HTTP answer to a request.
type Answer struct {
	Status int
	Header http.Header
	Form   Form
	// ContentLength is the length the answer announced, -1 for unknown.
	ContentLength int64
	// Body is the whole body of an answer that is not an event stream
	// (nil when it was over the limit).
	Body []byte
	// Resumed is set on the answer to a GET that resumed a stream.
	Resumed bool
}

// Message is one message of the server's.
type Message struct {
	// Data is the message as it came, without surrounding white space:
	// it begins with '{' or '[' but may not parse (a recorder keeps such
	// data as raw text).
	Data []byte
	// Batch is the whole JSON array when Data came as an element of a
	// batch (Index is then its place in it); nil otherwise.
	Batch []byte
	Index int
	// Stream is where the message came from; Resumed is set when it came
	// on a GET that resumed a cut stream.
	Stream  Stream
	Resumed bool
	// EventID is the SSE event id that carried the message, when
	// HasEventID.
	EventID    string
	HasEventID bool
}

// Handler takes what an exchange brings; every field may be nil. Its
// functions are called on the goroutine of the call that was given it, one
// at a time.
type Handler struct {
	// Answer is called with the HTTP answer: for an event stream as soon as
	// its status and headers are in, for another body once it is read.
	Answer func(*Answer)
	// Message is called with each message of the answer; returning true
	// stops the exchange (the rest of the answer is not read).
	Message func(Message) (stop bool)
	// Event is called with an SSE event that carries an id and no message
	// (the priming event of 2025-11-25); its Data is nil.
	Event func(Message)
}

func (h *Handler) answer(a *Answer) {
	if h != nil && h.Answer != nil {
		h.Answer(a)
	}
}

func (h *Handler) message(m Message) bool {
	return h != nil && h.Message != nil && h.Message(m)
}

func (h *Handler) event(m Message) {
	if h != nil && h.Event != nil {
		h.Event(m)
	}
}

// The reasons an exchange fails, wrapped by its *Error.
var (
	// ErrTooLong is an answer over Options.MaxMessage; it was not read.
	ErrTooLong = errors.New("over the message limit")
	// ErrNoAnswer is an answer that ended before a response to each of
	// the requests posted.
	ErrNoAnswer = errors.New("the answer ended before the response")
	// ErrSessionExpired is a 404 to a request with a session id: the
	// server ended the session. The Client forgets it; initialize again.
	ErrSessionExpired = errors.New("the session has expired; initialize again")
	// ErrClosed is a call on a closed Client.
	ErrClosed = errors.New("the client is closed")
)

// Error is an exchange that failed. Its text names the request, the URL,
// the status and a short excerpt of the body.
type Error struct {
	Method string // the HTTP method
	URL    string // redacted
	Status int    // 0 when no answer came
	// Excerpt is the start of the body of an error status.
	Excerpt string
	// Size is the length of an answer over the limit (-1 for unknown).
	Size int64
	// Limit is the message limit, for ErrTooLong.
	Limit int
	// Err is the cause: ErrTooLong, ErrNoAnswer, ErrSessionExpired, a
	// transport or read error; nil for an error status alone.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Method, e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	switch {
	case errors.Is(e.Err, ErrTooLong):
		size := "more than " + strconv.Itoa(e.Limit) + " bytes"
		if e.Size > 0 {
			size = strconv.FormatInt(e.Size, 10) + " bytes"
		}
		fmt.Fprintf(&b, ": an answer of %s is over the message limit of %d bytes; it was not read", size, e.Limit)
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Excerpt != "" {
		fmt.Fprintf(&b, ": %s", e.Excerpt)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// excerpt is the start of a body, for an error.
func excerpt(body []byte) string {
	const max = 200
	s := strings.TrimSpace(string(body))
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}

// Request is a message ready to be posted: its HTTP request, with the
// headers it will carry, is there for the caller to record.
type Request struct {
	HTTP *http.Request
	ctx  context.Context
	body []byte
	msg  *jsonrpc.Message // the first message, nil for none
	ids  []jsonrpc.ID     // the requests in it, to be answered
	init jsonrpc.ID       // an initialize request's id
	// session is the session id that the request carries.
	session string
}

// NewRequest prepares the POST of body (one JSON-RPC message, or a batch),
// with the headers that the transport asks for as of now. For HTTP+SSE it
// opens the event stream first, to learn where to post.
func (c *Client) NewRequest(ctx context.Context, body []byte) (*Request, error) {
	r := &Request{ctx: ctx, body: body}
	elems, _, err := jsonrpc.SplitBatch(body)
	if err == nil {
		for i, el := range elems {
			m, err := jsonrpc.Parse(el)
			if err != nil {
				continue
			}
			if i == 0 {
				r.msg = m
			}
			if m.Kind() == jsonrpc.KindRequest {
				r.ids = append(r.ids, m.ID)
				if m.Method == mcp.MethodInitialize {
					r.init = m.ID
				}
			}
		}
	}
	c.mu.Lock()
	closed, transport := c.closed, c.transport
	c.mu.Unlock()
	if closed {
		return nil, &Error{Method: http.MethodPost, URL: c.URL(), Err: ErrClosed}
	}
	target := c.url
	if transport == SSE {
		ls, err := c.openLegacy(ctx)
		if err != nil {
			return nil, err
		}
		target = ls.endpoint
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	c.setHeaders(req.Header, r.msg, transport == SSE)
	req.Header.Set("Content-Type", "application/json")
	if transport != SSE {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	r.HTTP, r.session = req, req.Header.Get(mcp.HeaderSessionID)
	return r, nil
}

// setHeaders sets the caller's headers and those of the session on h.
func (c *Client) setHeaders(h http.Header, msg *jsonrpc.Message, legacy bool) {
	for k, v := range c.header {
		h[k] = append([]string(nil), v...)
	}
	if legacy {
		return
	}
	c.mu.Lock()
	session, version := c.session, c.version
	c.mu.Unlock()
	if session != "" {
		h.Set(mcp.HeaderSessionID, session)
	}
	mcp.SetRequestHeaders(h, msg, version)
}

// Post posts body and hands each message of the answer to h: NewRequest,
// then Do.
func (c *Client) Post(ctx context.Context, body []byte, h *Handler) error {
	r, err := c.NewRequest(ctx, body)
	if err != nil {
		return err
	}
	return c.Do(r, h)
}

// Do sends r and hands what comes back to h, until the answer ends, or a
// response to each request in r came (HTTP+SSE), or h.Message stops it. An
// event stream cut before those responses is resumed. It returns an *Error
// for an answer that did not come, broke off, was over the limit, had an
// error status (after the messages of its JSON body), or ended before the
// responses (ErrNoAnswer); nil otherwise.
func (c *Client) Do(r *Request, h *Handler) error {
	c.mu.Lock()
	transport := c.transport
	c.mu.Unlock()
	if transport == SSE {
		return c.doLegacy(r, h)
	}
	resp, err := c.http.Do(r.HTTP)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		return c.fail(r.HTTP, 0, err)
	}
	defer resp.Body.Close()
	if transport == Auto && r.session == "" && !r.init.IsZero() {
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			if err := c.fallBack(r); err == nil {
				return c.doLegacy(r, h)
			}
		}
		c.decide(Streamable)
	}
	if sid := resp.Header.Get(mcp.HeaderSessionID); sid != "" {
		c.mu.Lock()
		c.session = sid
		c.mu.Unlock()
	}
	x := &exchange{c: c, r: r, h: h, pending: pendingOf(r.ids)}
	if err := x.read(resp, StreamPost, false); err != nil || x.stopped {
		return err
	}
	return x.result(resp, r.HTTP)
}

// decide fixes the transport that Auto found.
func (c *Client) decide(t Transport) {
	c.mu.Lock()
	if c.transport == Auto {
		c.transport = t
	}
	c.mu.Unlock()
}

// fail is the error of a request that got no usable answer.
func (c *Client) fail(req *http.Request, status int, err error) *Error {
	if ctxErr := req.Context().Err(); ctxErr != nil && status == 0 {
		err = ctxErr
	}
	e := &Error{Method: req.Method, URL: c.URL(), Status: status, Err: err, Limit: c.max, Size: -1}
	var se *sizedError
	if errors.As(err, &se) {
		e.Size = se.size
	}
	return e
}

// exchange is the state of one Do: the requests still waiting for their
// responses.
type exchange struct {
	c       *Client
	r       *Request
	h       *Handler
	pending map[jsonrpc.ID]bool
	stopped bool
	last    string        // the last event id, "" for none
	retry   time.Duration // the server's retry field, -1 for none
	moved   bool          // the last resumption went past the event it named
	listen  bool          // the GET stream: resumed while it lives
	body    []byte        // the body of an answer that is no stream
}

func pendingOf(ids []jsonrpc.ID) map[jsonrpc.ID]bool {
	p := make(map[jsonrpc.ID]bool, len(ids))
	for _, id := range ids {
		p[id] = true
	}
	return p
}

// read reads an answer (JSON or an event stream, resumed as needed) and
// hands its messages over.
func (x *exchange) read(resp *http.Response, stream Stream, resumed bool) error {
	form := formOf(resp)
	a := &Answer{Status: resp.StatusCode, Header: resp.Header, Form: form, ContentLength: resp.ContentLength, Resumed: resumed}
	if form == FormSSE {
		x.h.answer(a)
		x.retry = -1
		err := x.stream(resp.Body, stream, resumed)
		for tries := 0; err == nil && !x.stopped && (len(x.pending) > 0 || x.listen) && x.canResume() && tries < x.c.resumes; {
			if err = x.resume(stream); x.moved {
				tries = 0 // counted in a row
			} else {
				tries++
			}
		}
		if err != nil {
			return x.c.fail(x.r.HTTP, resp.StatusCode, err)
		}
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(x.c.max)+1))
	if err == nil && len(data) > x.c.max {
		x.h.answer(a)
		e := x.c.fail(x.r.HTTP, resp.StatusCode, ErrTooLong)
		e.Size = resp.ContentLength
		return e
	}
	if err != nil {
		return x.c.fail(x.r.HTTP, resp.StatusCode, fmt.Errorf("the answer broke off: %w", err))
	}
	a.Body, x.body = data, data
	x.h.answer(a)
	x.deliver(data, Message{Stream: stream})
	return nil
}

// canResume reports whether the stream read last may be resumed: it gave
// an event id, and the session is not of the stateless era, whose streams
// are not resumable.
func (x *exchange) canResume() bool {
	x.c.mu.Lock()
	closed := x.c.closed
	x.c.mu.Unlock()
	version := x.c.Version()
	if x.r.msg != nil {
		if v := mcp.MetaVersion(x.r.msg.Params); v != "" {
			version = v
		}
	}
	return x.last != "" && !closed && !mcp.Stateless(version) && x.r.ctx.Err() == nil
}

// result is the error of an answer read to its end: its status, or the
// responses that did not come.
func (x *exchange) result(resp *http.Response, req *http.Request) error {
	if resp.StatusCode >= 400 {
		e := x.c.fail(req, resp.StatusCode, nil)
		e.Excerpt = excerpt(x.body)
		if resp.StatusCode == http.StatusNotFound && req.Header.Get(mcp.HeaderSessionID) != "" {
			e.Err = ErrSessionExpired
			x.c.mu.Lock()
			if x.c.session == req.Header.Get(mcp.HeaderSessionID) {
				x.c.session = ""
			}
			x.c.mu.Unlock()
		}
		return e
	}
	if len(x.pending) > 0 && x.r.ctx.Err() == nil {
		return x.c.fail(req, resp.StatusCode, ErrNoAnswer)
	}
	if err := x.r.ctx.Err(); err != nil && len(x.pending) > 0 {
		return x.c.fail(req, resp.StatusCode, err)
	}
	return nil
}

// stream reads an event stream to its end, and returns an error only for
// an event over the limit (a cut stream is for the caller to resume).
func (x *exchange) stream(body io.Reader, stream Stream, resumed bool) error {
	sr := jsonrpc.NewSSEReader(body, x.c.max)
	for {
		ev, err := sr.Next()
		if err != nil {
			return nil
		}
		if ev.TooLong {
			e := fmt.Errorf("an SSE event of %d bytes: %w", ev.Size, ErrTooLong)
			x.last = "" // the stream is cut there: not resumed
			return &sizedError{err: e, size: int64(ev.Size)}
		}
		if ev.HasID {
			x.last = ev.ID
		}
		if ev.HasRetry {
			x.retry = time.Duration(ev.Retry) * time.Millisecond
		}
		m := Message{Stream: stream, Resumed: resumed, EventID: ev.ID, HasEventID: ev.HasID}
		if ev.Data != nil && (ev.Type == "" || ev.Type == "message") && !jsonrpc.NoMessage(ev.Data) {
			if x.deliver(ev.Data, m); x.stopped {
				return nil
			}
		} else if ev.HasID {
			x.h.event(m)
		}
	}
}

// sizedError carries the size of an SSE event over the limit to its *Error.
type sizedError struct {
	err  error
	size int64
}

func (e *sizedError) Error() string { return e.err.Error() }
func (e *sizedError) Unwrap() error { return e.err }

// resume reopens the stream with GET and Last-Event-ID, after the
// server's retry delay.
func (x *exchange) resume(stream Stream) error {
	if x.retry > 0 {
		t := time.NewTimer(min(x.retry, x.c.maxWait))
		select {
		case <-t.C:
		case <-x.r.ctx.Done():
			t.Stop()
			return nil
		}
	}
	x.moved = false
	req, err := http.NewRequestWithContext(x.r.ctx, http.MethodGet, x.c.url.String(), nil)
	if err != nil {
		return err
	}
	x.c.setHeaders(req.Header, nil, false)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(mcp.HeaderLastEventID, x.last)
	last := x.last
	resp, err := x.c.http.Do(req)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		x.last = ""
		return nil
	}
	defer resp.Body.Close()
	if formOf(resp) != FormSSE {
		x.last = "" // the server cannot resume it
		x.h.answer(&Answer{Status: resp.StatusCode, Header: resp.Header, Form: formOf(resp), ContentLength: resp.ContentLength, Resumed: true})
		return nil
	}
	x.h.answer(&Answer{Status: resp.StatusCode, Header: resp.Header, Form: FormSSE, ContentLength: resp.ContentLength, Resumed: true})
	err = x.stream(resp.Body, stream, true)
	if x.last == "" && err == nil {
		x.last = last
	}
	// Progress is a stream that went past the event it was resumed after:
	// a server that sends the same events again and again (or none) is
	// given up after Options.Resumes tries.
	x.moved = x.last != last
	return err
}

// deliver hands over the messages of data (see split).
func (x *exchange) deliver(data []byte, m Message) {
	for _, m := range split(data, m) {
		if x.one(m) {
			return
		}
	}
}

// split returns the messages of data, each as m with its Data: one
// message, or each element of a batch. Data that is no JSON (an error
// page) brings none.
func split(data []byte, m Message) []Message {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '{' && data[0] != '[') {
		return nil
	}
	if data[0] == '[' {
		if elems, batch, err := jsonrpc.SplitBatch(data); err == nil && batch && len(elems) > 0 {
			out := make([]Message, len(elems))
			for i, el := range elems {
				out[i] = m
				out[i].Data, out[i].Batch, out[i].Index = bytes.TrimSpace(el), data, i
			}
			return out
		}
	}
	m.Data = data
	return []Message{m}
}

// one hands over one message, learning the version from the response to
// initialize first.
func (x *exchange) one(m Message) bool {
	if len(x.pending) == 0 {
		// Nothing awaited (a notification posted, the GET stream): no
		// need to parse.
	} else if msg, err := jsonrpc.Parse(m.Data); err == nil && msg.Kind() == jsonrpc.KindResponse {
		delete(x.pending, msg.ID)
		if !x.r.init.IsZero() && msg.ID == x.r.init && msg.Result != nil {
			x.c.learn(msg.Result)
		}
	}
	if x.h.message(m) {
		x.stopped = true
	}
	return x.stopped
}

// learn keeps the protocol version of an initialize result.
func (c *Client) learn(result json.RawMessage) {
	v, _ := jsonrpc.Member(result, "protocolVersion")
	var version string
	if json.Unmarshal(v, &version) == nil && version != "" {
		c.mu.Lock()
		c.version = version
		c.mu.Unlock()
	}
}

// formOf says how an answer carries its messages.
func formOf(resp *http.Response) Form {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		return FormSSE
	case resp.ContentLength == 0 || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return FormNone
	case ct == "application/json":
		return FormJSON
	}
	return FormNone
}
