package httpguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The defaults of the listener limits (Options fields left zero).
const (
	DefaultMaxBodyBytes      = 64 << 20 // 64 MiB, the longest stdio line too
	DefaultMaxHeaderBytes    = 64 << 10 // 64 KiB of request line and headers
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second // to read a request's body
	DefaultIdleTimeout       = 2 * time.Minute  // a keep-alive connection between requests
	DefaultMaxSessions       = 1000
)

// Rate is a request rate: N requests per Per. The zero Rate is no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// String writes the rate as ParseRate reads it ("100/1s"), "" for none.
func (r Rate) String() string {
	if r.N <= 0 || r.Per <= 0 {
		return ""
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// ParseRate reads "N/DURATION": "100/1s", "600/1m", or with a bare unit
// "10/s", "300/m", "1000/h". "" is no limit.
func ParseRate(s string) (Rate, error) {
	if s == "" {
		return Rate{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || count <= 0 {
		return Rate{}, fmt.Errorf("rate %q: want N/DURATION with N > 0, such as 100/1s or 600/m", s)
	}
	per = strings.TrimSpace(per)
	if per != "" && !strings.ContainsAny(per[:1], "0123456789") {
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: want N/DURATION with a positive Go duration, such as 100/1s or 600/m", s)
	}
	return Rate{N: count, Per: d}, nil
}

// limits is the part of the guard that enforces Options' limits.
type limits struct {
	maxBody     int64
	readTimeout time.Duration
	maxSessions int
	rate        Rate
	now         func() time.Time

	mu       sync.Mutex // guards sessions, sse and buckets
	sessions map[string]bool
	sse      int // open HTTP+SSE streams, each a session
	buckets  map[string]*bucket
}

// bucket is one client's token bucket.
type bucket struct {
	tokens float64
	last   time.Time
}

func newLimits(o *Options) *limits {
	l := &limits{maxBody: o.MaxBodyBytes, readTimeout: o.ReadTimeout, maxSessions: o.MaxSessions, rate: o.RateLimit, now: o.Now,
		sessions: map[string]bool{}, buckets: map[string]*bucket{}}
	if l.maxBody == 0 {
		l.maxBody = DefaultMaxBodyBytes
	}
	if l.readTimeout == 0 {
		l.readTimeout = DefaultReadTimeout
	}
	if l.maxSessions == 0 {
		l.maxSessions = DefaultMaxSessions
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// serve enforces the limits around next: the rate, the body's size and read
// time, the number of sessions.
func (l *limits) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	var body []byte
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		var err error
		if body, err = l.readBody(w, r); err != nil {
			w.Header().Set("Connection", "close")
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				rpcError(w, http.StatusRequestEntityTooLarge, nil, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (--max-body-bytes)", mbe.Limit))
			case errors.Is(err, os.ErrDeadlineExceeded):
				rpcError(w, http.StatusRequestTimeout, nil, fmt.Sprintf("Request Timeout: the body did not arrive within %v (--read-timeout)", l.readTimeout))
			default:
				rpcError(w, http.StatusBadRequest, nil, "Bad Request: reading the body: "+err.Error())
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	if l.maxSessions < 0 {
		next.ServeHTTP(w, r)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	opensSSE := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sse")
	if (opensSSE || (sid == "" && r.Method == http.MethodPost && isInitialize(body))) && l.full() {
		rpcError(w, http.StatusServiceUnavailable, idOf(body), fmt.Sprintf("Service Unavailable: this mcpmock listener already has %d sessions, its maximum (--max-sessions); end one with DELETE", l.maxSessions))
		return
	}
	if opensSSE {
		l.mu.Lock()
		l.sse++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.sse--
			l.mu.Unlock()
		}()
	}
	sw := &sessionWatch{ResponseWriter: w, l: l, r: r}
	next.ServeHTTP(sw, r)
	if !sw.done {
		sw.done = true
		sw.note(http.StatusOK)
	}
}

// rateOK takes a token from the client's bucket, or answers 429 with
// Retry-After and reports false.
func (l *limits) rateOK(w http.ResponseWriter, r *http.Request) bool {
	wait, ok := l.allow(clientKey(r))
	if ok {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	rpcError(w, http.StatusTooManyRequests, nil, fmt.Sprintf("Too Many Requests: this mcpmock listener allows %d requests per %v from one client (--rate-limit); retry after %ds", l.rate.N, l.rate.Per, secs))
	return false
}

// readBody reads the whole body within the size and time limits, then lifts
// the read deadline so that a long answer stream is not cut by it. After an
// error the deadline stays, so that net/http does not wait for the rest of
// the body before it writes the error; the connection is then closed.
func (l *limits) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if l.readTimeout > 0 {
		rc.SetReadDeadline(time.Now().Add(l.readTimeout))
	}
	src := r.Body
	if l.maxBody > 0 {
		src = http.MaxBytesReader(w, r.Body, l.maxBody)
	}
	b, err := io.ReadAll(src)
	if err == nil && l.readTimeout > 0 {
		rc.SetReadDeadline(time.Time{})
	}
	return b, err
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

func (l *limits) full() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sessions)+l.sse >= l.maxSessions
}

// clientKey is the client's IP address.
func clientKey(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// isInitialize reports whether body is an initialize request, alone or in
// a batch: the request that opens a Streamable HTTP session.
func isInitialize(body []byte) bool {
	return bytes.Contains(body, []byte(`"initialize"`)) && methodIs(body, "initialize")
}

func methodIs(body []byte, method string) bool {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == method
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == method {
				return true
			}
		}
	}
	return false
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
// session, a 2xx answer to DELETE or a 404 for a session id ends it.
type sessionWatch struct {
	http.ResponseWriter
	l    *limits
	r    *http.Request
	done bool
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

func (s *sessionWatch) note(status int) {
	asked := s.r.Header.Get("Mcp-Session-Id")
	given := s.Header().Get("Mcp-Session-Id")
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	switch {
	case asked != "" && (status == http.StatusNotFound || s.r.Method == http.MethodDelete && status < 300):
		delete(s.l.sessions, asked)
	case asked == "" && given != "" && status < 300:
		s.l.sessions[given] = true
	}
}

// Server returns an http.Server for h behind Wrap(h, opts), with the
// listener limits of opts that belong to the server (header size, header
// and idle timeouts) and errors logged to errorLog (nil: the log package's
// logger). There is no write timeout: event streams last.
func Server(h http.Handler, opts *Options, errorLog *log.Logger) *http.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	srv := &http.Server{
		Handler:           Wrap(h, &o),
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          errorLog,
	}
	if srv.MaxHeaderBytes == 0 {
		srv.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if srv.ReadHeaderTimeout == 0 {
		srv.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if srv.IdleTimeout == 0 {
		srv.IdleTimeout = DefaultIdleTimeout
	}
	return srv
}
