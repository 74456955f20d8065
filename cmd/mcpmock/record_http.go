package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/recorder"
)

// recordHTTPFlags are the flags of record for HTTP on either side:
//
//	--upstream URL --listen ADDR   the HTTP tap (HTTP client, HTTP server)
//	--upstream URL                 the bridge from a stdio client to an HTTP server
//	--listen ADDR -- COMMAND       the bridge from an HTTP client to a stdio server
type recordHTTPFlags struct {
	upstream     string
	listen       string
	authToken    string
	allowOrigins []string
	allowRemote  bool
	limits       limitFlags      // replay_http.go
	guard        recorder.Filter // set by guardFlags.apply (record_guard.go)
}

func (f *recordHTTPFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.upstream, "upstream", "", "record the MCP server at `URL` (Streamable HTTP, or HTTP+SSE for a URL ending in /sse) instead of a command")
	fs.StringVar(&f.listen, "listen", "", "serve the client over HTTP on `ADDR` instead of stdio: Streamable HTTP at /mcp, HTTP+SSE at /sse (\":0\" takes a free port on 127.0.0.1)")
	fs.StringVar(&f.authToken, "auth-token", "", "require \"Authorization: Bearer `TOKEN`\" on the HTTP listener (401 otherwise); that value is not passed upstream, the client's other Authorization values are")
	fs.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "also accept requests from browser `ORIGIN` (repeatable; \"*\" for any); loopback origins are always accepted")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address and accept any Host header")
	f.limits.register(fs)
}

// hasUpstream reports whether the server side is an HTTP upstream.
func (f *recordHTTPFlags) hasUpstream() bool { return f.upstream != "" }

// enabled reports whether either side is HTTP, so run replaces the stdio tap.
func (f *recordHTTPFlags) enabled() bool { return f.upstream != "" || f.listen != "" }

// meta fills in the cassette's description of the recorded server: its URL
// (secrets in the query redacted), and the client-facing transport.
func (f *recordHTTPFlags) meta(m *cassettes.Meta) {
	if f.upstream != "" {
		m.Server = []string{cassettes.RedactURL(f.upstream)}
	}
	if f.listen != "" {
		m.Transport = "streamable-http"
		if u, err := url.Parse(f.upstream); err == nil && strings.HasSuffix(u.Path, "/sse") {
			m.Transport = "sse"
		}
	}
}

// shutdownGrace is how long requests in flight have to finish once record
// is told to stop; open event streams are ended at once.
const shutdownGrace = 5 * time.Second

// run runs the tap with HTTP on one side or both and returns the exit status.
func (f *recordHTTPFlags) run(ctx context.Context, e *env, argv []string, rec *recorder.Recorder, log *slog.Logger) (int, error) {
	if f.upstream != "" && len(argv) > 0 {
		return 0, usagef("record takes --upstream URL or -- COMMAND, not both")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.signals:
			cancel()
		case <-ctx.Done():
		}
	}()
	if f.listen == "" {
		// A stdio client, an HTTP server.
		err := recorder.StdioToHTTP(ctx, f.upstream, e.stdin, e.stdout, rec, &recorder.BridgeOptions{Logger: log, Guard: f.guard})
		return 0, err
	}
	guard := &httpguard.Options{
		AllowedOrigins:       f.allowOrigins,
		AuthToken:            f.authToken,
		AllowNonLoopbackHost: f.allowRemote,
	}
	if err := f.limits.apply(guard); err != nil {
		return 0, err
	}
	// Bind first: a refused address starts no server.
	l, err := listen(ctx, e, f.listen, f.allowRemote)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	var h http.Handler
	var closeStreams func()
	var bridge *recorder.StdioBridge
	if f.upstream != "" {
		// The listener bounds bodies (--max-body-bytes); the tap's bound is
		// the same (both read MaxBodyBytes by one rule).
		tap, err := recorder.NewHTTP(f.upstream, rec, &recorder.HTTPOptions{Logger: log, Guard: f.guard, MaxBodyBytes: guard.MaxBodyBytes})
		if err != nil {
			return 0, usagef("%v", err)
		}
		h, closeStreams = tap, tap.CloseStreams
	} else {
		var err error
		bridge, err = recorder.NewStdioBridge(argv, e.stderr, rec, &recorder.BridgeOptions{Logger: log, Guard: f.guard})
		if err != nil {
			return 0, err
		}
		h, closeStreams = bridge, bridge.CloseStreams
	}
	srv := httpguard.Server(h, guard, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	srv.RegisterOnShutdown(closeStreams)
	fmt.Fprintln(e.stderr, httpguard.URLLine(l, "/mcp"))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var bridgeDone <-chan struct{}
	if bridge != nil {
		bridgeDone = bridge.Done()
	}
	select {
	case err := <-served:
		return 0, fmt.Errorf("serve %s: %w", f.listen, err)
	case <-ctx.Done():
	case <-bridgeDone:
		// The stdio server exited on its own.
	}
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn(fmt.Sprintf("requests still in flight after %v were cut", shutdownGrace))
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return 0, err
	}
	if bridge != nil {
		status, err := bridge.Close()
		if ctx.Err() != nil {
			// Stopped by a signal: the server's status on the way out is not
			// a failure of the recording.
			return 0, err
		}
		return status, err
	}
	return 0, nil
}
