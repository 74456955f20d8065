package main

import (
	"context"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/replayer"
)

// replayHTTPFlags are the flags of replay for serving over HTTP (--listen
// and the listener's safety). Placeholder until the HTTP replay lands.
type replayHTTPFlags struct{}

func (f *replayHTTPFlags) register(fs *pflag.FlagSet) {}

// enabled reports whether replay serves HTTP instead of stdio.
func (f *replayHTTPFlags) enabled() bool { return false }

// serve serves the engine over HTTP until ctx ends.
func (f *replayHTTPFlags) serve(ctx context.Context, e *env, eng *replayer.Engine, log *slog.Logger) error {
	return nil
}
