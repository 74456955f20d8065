package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/replayer"
	"github.com/mcpmock/mcpmock/view"
)

// This file is --ui ADDR of record, replay and run: the web view of the
// live traffic (docs/view.md), on a loopback listener with the Host and
// Origin checks of every listener. The live log's records go through a
// view.Live per cassette, which takes each message whole, on to the live
// log.

// webUI is the view of --ui: one board, served until close.
type webUI struct {
	board *view.Board
	close func()
}

// startUI serves the board of --ui; nil when --ui is not given.
func (c *common) startUI(ctx context.Context, e *env) (*webUI, error) {
	if c.ui == "" {
		return nil, nil
	}
	l, err := listen(ctx, e, c.ui, false)
	if err != nil {
		return nil, usagef("--ui %s: %v", c.ui, errors.Unwrap(err))
	}
	board := view.NewBoard()
	srv := httpguard.Server(board.Handler(), &httpguard.Options{}, nil)
	fmt.Fprintf(e.stderr, "mcpmock: ui: listening on %s (the web view of the traffic)\n", httpguard.URL(l, "/"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	return &webUI{board: board, close: func() { srv.Close(); <-done }}, nil
}

// logger returns the logger of the traffic of cassette name: through the
// view (when there is one) to log.
func (u *webUI) logger(name string, log *slog.Logger) *slog.Logger {
	if u == nil {
		return log
	}
	return slog.New(u.board.Live(name, log.Handler()))
}

// withUI serves the web view of the live traffic when --ui is given (the
// one cassette of record and replay). stop ends the view's listener.
func (c *common) withUI(ctx context.Context, e *env, name string, log *slog.Logger) (_ *slog.Logger, stop func(), err error) {
	u, err := c.startUI(ctx, e)
	if err != nil || u == nil {
		return log, func() {}, err
	}
	return u.logger(name, log), u.close, nil
}

// replayingUI tells the view that log goes to, if it goes to one, that
// the traffic is eng's replay of cas: the page then shows the recorded
// cassette beside it, what answered each request and what no client used.
func replayingUI(log *slog.Logger, cas *cassettes.Cassette, eng *replayer.Engine) {
	if l, ok := log.Handler().(*view.Live); ok {
		l.Replaying(cas, eng.Unused)
	}
}
