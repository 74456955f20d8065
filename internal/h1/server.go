// Package h1 is a lean HTTP/1.1 server for handlers that mostly answer at
// once: the replay's listener. It serves any http.Handler, with the
// request that net/http's parser (http.ReadRequest) would give, but it
// spends less a request than http.Server, which a replay answering in tens
// of microseconds pays in full:
//
//   - No background read a request. http.Server starts a goroutine that
//     reads the connection while the handler runs, to cancel the request's
//     context when the client goes away, and stops it with a read deadline
//     in the past when the handler returns: two goroutine wake-ups and
//     three deadline changes a request. Here that read starts only when a
//     handler is still running WatchAfter after its request came in (an
//     event stream, an answer waiting for its cause, a delay).
//   - One write an answer: the status line, the headers and a body of up
//     to 32 KiB go out together when the handler returns (Content-Length),
//     or when it flushes (chunked).
//   - A plain request (an MCP client's: a path, a dozen ordinary headers, a
//     Content-Length) is read where it lies in the connection's buffer, its
//     strings taken from the connection's table, in three allocations where
//     http.ReadRequest makes sixteen (parse.go); any other goes to
//     http.ReadRequest.
//
// What it keeps of http.Server: keep-alive and pipelining, chunked bodies
// both ways, Expect: 100-continue, the header size limit (431), the header
// and idle timeouts, Hijack, Flush and the read and write deadlines of
// http.ResponseController, a request context that ends when the client
// goes away, http.ErrAbortHandler, ConnState, Shutdown and Close. It does
// not serve HTTP/2 or TLS (the replay serves neither).
package h1

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// WatchAfter is how long a handler runs before its connection is watched
// for the client going away. Shorter answers never start that read.
const WatchAfter = 5 * time.Millisecond

// Server serves HTTP/1.1 on a listener. Its fields are those of http.Server
// with the same meaning; set them before Serve.
type Server struct {
	Handler http.Handler
	// MaxHeaderBytes bounds the request line and headers (431 beyond);
	// 0 means http.DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds the time to read a request's line and
	// headers from its first byte (or from the connection's start); 0 means
	// none.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive
	// connection; 0 means ReadHeaderTimeout.
	IdleTimeout time.Duration
	// ConnState, when set, is called as a connection changes state.
	ConnState func(net.Conn, http.ConnState)
	// ErrorLog logs accept errors and handler panics; nil means the log
	// package's logger.
	ErrorLog *log.Logger

	mu         sync.Mutex
	listeners  map[*net.Listener]struct{}
	conns      map[*conn]struct{}
	onShutdown []func()
	closing    atomic.Bool // Shutdown or Close was called
	base       context.Context
	cancel     context.CancelFunc
}

// RegisterOnShutdown registers a function to call when Shutdown starts.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

func (s *Server) init() {
	if s.base == nil {
		s.base, s.cancel = context.WithCancel(context.Background())
		s.listeners = map[*net.Listener]struct{}{}
		s.conns = map[*conn]struct{}{}
	}
}

// Serve accepts connections on l and serves each on a goroutine of its own,
// until Shutdown or Close (http.ErrServerClosed) or an accept error that is
// not temporary. It closes l when it returns.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.init()
	if s.closing.Load() {
		s.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	s.listeners[&l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, &l)
		s.mu.Unlock()
		l.Close()
	}()
	var delay time.Duration
	for {
		rwc, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return http.ErrServerClosed
			}
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("h1: accept error: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		c := s.newConn(rwc)
		if c == nil {
			continue
		}
		go c.serve()
	}
}

// newConn registers a connection; nil when the server is closing.
func (s *Server) newConn(rwc net.Conn) *conn {
	c := &conn{srv: s, rwc: rwc, remote: rwc.RemoteAddr().String()}
	c.r.c, c.r.limit = c, -1
	if c.io = newRawIO(rwc); c.io == nil {
		c.io = rwc
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		rwc.Close()
		return nil
	}
	s.conns[c] = struct{}{}
	c.local = rwc.LocalAddr()
	s.mu.Unlock()
	s.setState(c, http.StateNew)
	return c
}

// forget removes a connection that was closed or hijacked.
func (s *Server) forget(c *conn, state http.ConnState) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.setState(c, state)
}

func (s *Server) setState(c *conn, state http.ConnState) {
	if s.ConnState != nil {
		s.ConnState(c.rwc, state)
	}
}

// Close closes the listeners and every connection at once, ending every
// request's context.
func (s *Server) Close() error {
	s.mu.Lock()
	s.init()
	s.closing.Store(true)
	s.cancel()
	err := s.closeListeners()
	for c := range s.conns {
		c.rwc.Close()
	}
	s.mu.Unlock()
	return err
}

// Shutdown closes the listeners, calls the functions registered with
// RegisterOnShutdown, then closes each connection once it is idle, and
// returns when none is left or when ctx ends (with its error; Close then
// cuts what is left).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.init()
	s.closing.Store(true)
	err := s.closeListeners()
	for _, f := range s.onShutdown {
		go f()
	}
	s.mu.Unlock()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.closeIdle() {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// closeListeners closes every listener; s.mu is held.
func (s *Server) closeListeners() error {
	var err error
	for l := range s.listeners {
		if cerr := (*l).Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// closeIdle closes the connections that wait for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.mu.Lock()
		if c.idle {
			c.shut = true
			c.rwc.Close()
		}
		c.mu.Unlock()
	}
	return len(s.conns) == 0
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

func (s *Server) maxHeaderBytes() int {
	if s.MaxHeaderBytes > 0 {
		return s.MaxHeaderBytes
	}
	return http.DefaultMaxHeaderBytes
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout != 0 {
		return s.IdleTimeout
	}
	return s.ReadHeaderTimeout
}

// panicked logs a handler's panic other than http.ErrAbortHandler.
func (s *Server) panicked(c *conn, v any) {
	if v == http.ErrAbortHandler {
		return
	}
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	s.logf("h1: panic serving %s: %v\n%s", c.remote, v, buf)
}
