package httpguard

import (
	"encoding/json"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"log"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/h1"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// The defaults of the listener limits (Options fields left zero).
const (
	DefaultMaxBodyBytes      = 64 << 20 // 64 MiB, the longest stdio line too
	DefaultMaxHeaderBytes    = 64 << 10 // 64 KiB of request line and headers
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second // to read a request's body
	DefaultIdleTimeout       = 2 * time.Minute  // a keep-alive connection between requests
	DefaultMaxSessions       = 1000
	// DefaultMaxInFlightBytes (body.go) and DefaultSessionIdle
	// (sessions.go) are the others.
)

// limits is the part of the guard that enforces Options' limits.
type limits struct {
	maxBody     int64
	readTimeout time.Duration
	rate        rate.Rate
	now         func() time.Time
	sessions    *sessionTable
	bodies      budget

	mu      sync.Mutex // guards buckets
	buckets map[string]*bucket
}

// bucket is one client's token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

func newLimits(o *Options) *limits {
	l := &limits{maxBody: o.MaxBodyBytes, readTimeout: o.ReadTimeout, rate: o.RateLimit, now: o.Now,
		bodies: budget{max: o.MaxInFlightBytes}, buckets: map[string]*bucket{}}
	if l.maxBody == 0 {
		l.maxBody = DefaultMaxBodyBytes
	}
	if l.readTimeout == 0 {
		l.readTimeout = DefaultReadTimeout
	}
	if l.bodies.max == 0 {
		l.bodies.max = DefaultMaxInFlightBytes
	}
	if l.now == nil {
		l.now = time.Now
	}
	maxSessions, idle := o.MaxSessions, o.SessionIdle
	if maxSessions == 0 {
		maxSessions = DefaultMaxSessions
	}
	if idle == 0 {
		idle = DefaultSessionIdle
	}
	l.sessions = newSessionTable(maxSessions, idle, l.now, o.EndSession)
	return l
}

// serve enforces the limits around next: the body's size, read time and
// the in-flight budget, then the sessions (expiry, their number).
func (l *limits) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	x := exchanges.Get().(*exchange)
	x.sw = sessionWatch{ResponseWriter: w, t: l.sessions, r: r}
	defer x.end(&l.bodies)
	var body []byte
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		b, err := l.readBody(w, r, &x.held, &x.body) // body.go
		if err != nil {
			l.refuseBody(w, r, err)
			return
		}
		body = b
		x.body.b = body
		x.body.r.Reset(body)
		r.Body, r.ContentLength = &x.body, int64(len(body))
	}
	sid := r.Header.Get(mcp.HeaderSessionID)
	if sid != "" {
		switch l.sessions.enter(sid) {
		case sessionExpired:
			rpcError(w, http.StatusNotFound, idOf(body), fmt.Sprintf("Not Found: the session ended after %v without a request (--session-idle); send initialize to start a new one", l.sessions.idle))
			return
		case sessionOpen:
			defer l.sessions.leave(sid)
		}
	}
	opensSSE := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sse")
	sw := &x.sw
	if opensSSE || (sid == "" && r.Method == http.MethodPost && opensSession(body)) {
		if !l.sessions.reserve() {
			rpcError(w, http.StatusServiceUnavailable, idOf(body), fmt.Sprintf("Service Unavailable: this mcpmock listener already has %d sessions, its maximum (--max-sessions); end one with DELETE", l.sessions.max))
			return
		}
		if opensSSE {
			defer l.sessions.unreserve() // an HTTP+SSE session lasts as long as its stream
		} else {
			sw.reserved = true
		}
	}
	defer sw.finish()
	next.ServeHTTP(sw, r)
}

// exchange is what the guard keeps of one request, in one allocation: the
// bytes its body holds of the budget, the body read, and the writer that
// watches the session it opens or ends. It is used again for a later
// request once its handler released the request (Release).
type exchange struct {
	held int64
	body Body
	sw   sessionWatch
}

// exchanges are the exchanges of released requests.
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// end gives the budget back what the body held of it once the request is
// done. When the handler released the request, the exchange and its
// body's buffer go back to their pools, and the lean server is told that
// it may use the request and response again (h1.Release).
func (x *exchange) end(b *budget) {
	b.give(x.held)
	if !x.body.released {
		return // the handler may keep the body, or the writer
	}
	h1.Release(x.sw.ResponseWriter)
	x.body.recycle()
	*x = exchange{}
	exchanges.Put(x)
}

// rateOK takes a token from the client's bucket, or answers 429 with
// Retry-After and reports false.
func (l *limits) rateOK(w http.ResponseWriter, r *http.Request) bool {
	if l.rate.N <= 0 || l.rate.Per <= 0 {
		return true // no --rate-limit: the client's address is not read
	}
	wait, ok := l.allow(clientKey(r))
	if ok {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	rpcError(w, http.StatusTooManyRequests, nil, fmt.Sprintf("Too Many Requests: this mcpmock listener allows %d requests per %v from one client (--rate-limit); retry after %ds", l.rate.N, l.rate.Per, secs))
	return false
}

// allow takes a token from the client's bucket; when there is none, it says
// how long until there is.
func (l *limits) allow(key string) (time.Duration, bool) {
	if l.rate.N <= 0 || l.rate.Per <= 0 {
		return 0, true
	}
	now := l.now()
	per := float64(l.rate.Per) / float64(l.rate.N) // time to earn one token
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= 4096 {
			l.prune(now)
		}
		b = &bucket{tokens: float64(l.rate.N), last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(float64(l.rate.N), b.tokens+float64(now.Sub(b.last))/per)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) * per), false
}

// prune forgets the clients whose buckets are full again.
func (l *limits) prune(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.last) >= l.rate.Per {
			delete(l.buckets, k)
		}
	}
}

// clientKey is the client's IP address.
func clientKey(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// idOf is the id of a JSON-RPC request body, nil when it has none.
func idOf(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	return m.ID
}

// rpcError answers status with a JSON-RPC error body (code -32000, a server
// error), which MCP clients show better than a plain text.
func rpcError(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32000, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// sessionWatch follows the Mcp-Session-Id of responses: a new one opens a
// session (in the slot reserved for it), a 2xx answer to DELETE or a 404
// for a session id ends it.
type sessionWatch struct {
	http.ResponseWriter
	t        *sessionTable
	r        *http.Request
	reserved bool // a slot is reserved for the session this request may open
	done     bool
}

func (s *sessionWatch) WriteHeader(status int) {
	if !s.done {
		s.done = true
		s.note(status)
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionWatch) Write(p []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(p)
}

func (s *sessionWatch) Flush() {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines,
// hijacking).
func (s *sessionWatch) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// finish notes an answer that wrote nothing, and frees a reserved slot
// that no session took (also when the handler panicked).
func (s *sessionWatch) finish() {
	if !s.done {
		s.done = true
		s.note(http.StatusOK)
	}
	if s.reserved {
		s.reserved = false
		s.t.unreserve()
	}
}

func (s *sessionWatch) note(status int) {
	asked := s.r.Header.Get(mcp.HeaderSessionID)
	given := s.Header().Get(mcp.HeaderSessionID)
	switch {
	case asked != "" && (status == http.StatusNotFound || s.r.Method == http.MethodDelete && status < 300):
		s.t.closed(asked)
	case asked == "" && given != "" && status < 300:
		s.t.opened(given, s.reserved)
		s.reserved = false
	}
}

// Server returns an http.Server for h behind Wrap(h, opts), with the
// listener limits of opts that belong to the server (header size, header
// and idle timeouts) and errors logged to errorLog (nil: the log package's
// logger). There is no write timeout: event streams last.
func Server(h http.Handler, opts *Options, errorLog *log.Logger) *http.Server {
	o := serverLimits(opts)
	return &http.Server{
		Handler:           Wrap(h, &o),
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          errorLog,
	}
}

// LeanServer is Server on the lean HTTP/1.1 server of internal/h1, for a
// handler that mostly answers at once (the replay): the same guard and
// limits, less CPU a request.
func LeanServer(h http.Handler, opts *Options, errorLog *log.Logger) *h1.Server {
	o := serverLimits(opts)
	return &h1.Server{
		Handler:           Wrap(h, &o),
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          errorLog,
	}
}

// serverLimits returns a copy of opts (nil: the zero Options) with the
// server's limits defaulted.
func serverLimits(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	return o
}
