package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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
}

func (f *replayHTTPFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "", "serve HTTP on `ADDR` instead of stdio: Streamable HTTP at /mcp, HTTP+SSE at /sse (\":0\" takes a free port on 127.0.0.1)")
	fs.StringVar(&f.authToken, "auth-token", "", "require \"Authorization: Bearer `TOKEN`\" on the HTTP listener (401 otherwise)")
	fs.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "also accept requests from browser `ORIGIN` (repeatable; \"*\" for any); loopback origins are always accepted")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address and accept any Host header")
}

// enabled reports whether replay serves HTTP instead of stdio.
func (f *replayHTTPFlags) enabled() bool { return f.listen != "" }

// shutdownTimeout is how long requests in flight have to finish once replay
// is told to stop.
const shutdownTimeout = 5 * time.Second

// serve serves the engine over HTTP until ctx ends.
func (f *replayHTTPFlags) serve(ctx context.Context, e *env, eng *replayer.Engine, log *slog.Logger) error {
	if host, _, err := net.SplitHostPort(f.listen); err == nil && host != "" && !httpguard.IsLoopbackHost(host) && !f.allowRemote {
		return usagef("--listen %s is not a loopback address: add --allow-remote to serve other machines", f.listen)
	}
	l, err := httpguard.Listen(f.listen)
	if err != nil {
		return err
	}
	h := eng.Handler(nil)
	srv := &http.Server{
		Handler: httpguard.Wrap(h, &httpguard.Options{
			AllowedOrigins:       f.allowOrigins,
			AuthToken:            f.authToken,
			AllowNonLoopbackHost: f.allowRemote,
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(h.Close)
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
