package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/replayer"
)

// replayHTTPFlags are the flags of replay for serving over HTTP (--listen
// and the listener's safety).
type replayHTTPFlags struct {
	listen       string
	authToken    string
	allowOrigins []string
	allowRemote  bool
	limits       limitFlags
}

// limitFlags are the listener limits of --listen, shared by replay and
// record (internal/httpguard has the defaults).
type limitFlags struct {
	maxBody           int64
	maxHeader         int
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	idleTimeout       time.Duration
	maxSessions       int
	sessionIdle       time.Duration
	maxInFlight       int64
	rateLimit         string
}

func (f *limitFlags) register(fs *pflag.FlagSet) {
	fs.Int64Var(&f.maxBody, "max-body-bytes", httpguard.DefaultMaxBodyBytes, "refuse a POST body over `N` bytes with 413 (-1: no limit)")
	fs.IntVar(&f.maxHeader, "max-header-bytes", httpguard.DefaultMaxHeaderBytes, "refuse a request whose headers exceed `N` bytes with 431")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", httpguard.DefaultReadHeaderTimeout, "close a connection whose request headers take longer than `D`")
	fs.DurationVar(&f.readTimeout, "read-timeout", httpguard.DefaultReadTimeout, "answer 408 to a POST whose body takes longer than `D` to arrive (-1s: no limit)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", httpguard.DefaultIdleTimeout, "close a keep-alive connection idle for `D`")
	fs.IntVar(&f.maxSessions, "max-sessions", httpguard.DefaultMaxSessions, "answer 503 to a request that would open a session beyond `N` open ones (-1: no limit)")
	fs.DurationVar(&f.sessionIdle, "session-idle", httpguard.DefaultSessionIdle, "end a session that has had no request for `D` (its next request gets 404, so the client initializes again; -1s: never)")
	fs.Int64Var(&f.maxInFlight, "max-inflight-bytes", httpguard.DefaultMaxInFlightBytes, "bound the bytes of all request bodies in flight together to `N`: 503 with Retry-After beyond it (-1: no limit)")
	fs.StringVar(&f.rateLimit, "rate-limit", "", "allow each client (IP address) `N/DURATION` requests, e.g. 100/1s or 600/m; 429 with Retry-After beyond it (default no limit)")
}

// apply sets the limits of o.
func (f *limitFlags) apply(o *httpguard.Options) error {
	rate, err := rate.Parse(f.rateLimit)
	if err != nil {
		return usagef("--rate-limit: %v", err)
	}
	if f.maxHeader <= 0 {
		return usagef("--max-header-bytes must be positive")
	}
	o.MaxBodyBytes, o.MaxHeaderBytes = f.maxBody, f.maxHeader
	o.ReadHeaderTimeout, o.ReadTimeout, o.IdleTimeout = f.readHeaderTimeout, f.readTimeout, f.idleTimeout
	if f.sessionIdle == 0 {
		return usagef("--session-idle must not be 0 (-1s: sessions never expire)")
	}
	if f.maxInFlight == 0 {
		return usagef("--max-inflight-bytes must not be 0 (-1: no limit)")
	}
	o.MaxSessions, o.RateLimit = f.maxSessions, rate
	o.SessionIdle, o.MaxInFlightBytes = f.sessionIdle, f.maxInFlight
	return nil
}

func (f *replayHTTPFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "", "serve HTTP on `ADDR` instead of stdio: Streamable HTTP at /mcp, HTTP+SSE at /sse (\":0\" takes a free port on 127.0.0.1)")
	fs.StringVar(&f.authToken, "auth-token", "", "require \"Authorization: Bearer `TOKEN`\" on the HTTP listener (401 otherwise)")
	fs.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "also accept requests from browser `ORIGIN` (repeatable; \"*\" for any); loopback origins are always accepted")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address and accept any Host header")
	f.limits.register(fs)
}

// replayHandler is the replay engine's HTTP handler as replay serves it
// behind guard (with the control endpoint), whose EndSession it sets: an
// expired session's replay state is dropped by a DELETE.
func replayHandler(eng *replayer.Engine, guard *httpguard.Options) *replayer.HTTPHandler {
	// The guard bounds the body first; the handler's bound is the same
	// (both read MaxBodyBytes by one rule).
	h := eng.Handler(&replayer.HTTPOptions{MaxBodyBytes: guard.MaxBodyBytes, Control: true})
	guard.EndSession = httpguard.EndByDelete(h, "/mcp")
	return h
}

// replayRoutes mounts h at the paths of replay --listen (DESIGN.md,
// "Command line"); every other path is 404.
func replayRoutes(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/mcp", "/sse", "/message", "/_mcpmock/notify"} {
		mux.Handle(p, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("Not Found: mcpmock serves Streamable HTTP at /mcp and HTTP+SSE at /sse, not %s", r.URL.Path), http.StatusNotFound)
	})
	return mux
}

// listen binds a --listen address of replay or record (httpguard.Listen
// decides what it binds and refuses) and prints the warning of a
// non-loopback one; a refused address is a usage error.
func listen(ctx context.Context, e *env, addr string, allowRemote bool) (net.Listener, error) {
	l, err := httpguard.Listen(ctx, addr, &httpguard.ListenOptions{AllowRemote: allowRemote})
	if errors.Is(err, httpguard.ErrNotLoopback) {
		return nil, usagef("--listen %s: %v", addr, err)
	}
	if err != nil {
		return nil, err
	}
	if w := httpguard.RemoteWarning(l); w != "" {
		fmt.Fprintln(e.stderr, w)
	}
	return l, nil
}

// notServed is an error that stopped replay before it served anything
// (a refused --listen, a port in use): replay prints it alone, without a
// summary of a session that never was.
type notServed struct{ error }

func (e notServed) Unwrap() error { return e.error }

// enabled reports whether replay serves HTTP instead of stdio.
func (f *replayHTTPFlags) enabled() bool { return f.listen != "" }

// shutdownTimeout is how long requests in flight have to finish once replay
// is told to stop.
const shutdownTimeout = 5 * time.Second

// oneThread runs the Go code of the process on one thread (GOMAXPROCS 1)
// from now on, unless the GOMAXPROCS environment variable says how many;
// the returned function puts back what was. For the HTTP replay: each
// request costs it little work but several goroutine wake-ups in net/http
// (the connection's, its background read's, the network poller's), and
// with a second thread each one wakes that thread and lets it spin looking
// for work, beside the client that the replay is there to serve. Measured
// on 2 cores with a go-sdk client: the replay's CPU a call 125–190 µs →
// 87–120 µs, and more calls/s, with 1, 100 and 1,000 concurrent sessions
// alike (docs/performance.md). One thread serves about ten thousand calls
// a second; GOMAXPROCS=N gives a load test more.
func oneThread() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	was := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(was) }
}

// serve serves the engine over HTTP until ctx ends; mem, when set, is the
// process's memory limit, which grows with the open connections.
func (f *replayHTTPFlags) serve(ctx context.Context, e *env, eng *replayer.Engine, log *slog.Logger, mem *memoryLimit) error {
	guard := &httpguard.Options{
		AllowedOrigins:       f.allowOrigins,
		AuthToken:            f.authToken,
		AllowNonLoopbackHost: f.allowRemote,
	}
	if err := f.limits.apply(guard); err != nil {
		return notServed{err}
	}
	l, err := listen(ctx, e, f.listen, f.allowRemote)
	if err != nil {
		return notServed{err}
	}
	h := replayHandler(eng, guard)
	srv := httpguard.LeanServer(replayRoutes(h), guard, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	srv.RegisterOnShutdown(h.Close)
	if mem != nil {
		srv.ConnState = mem.connState // room for each open connection
	}
	fmt.Fprintln(e.stderr, httpguard.URLLine(l, "/mcp"))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		h.Close()
		return fmt.Errorf("serve %s: %w", f.listen, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn(fmt.Sprintf("requests still in flight after %v were cut", shutdownTimeout))
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
