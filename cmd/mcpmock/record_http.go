package main

import (
	"context"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
)

// recordHTTPFlags are the flags of record for HTTP on either side
// (--listen, --upstream). Placeholder until the HTTP tap lands.
type recordHTTPFlags struct{}

func (f *recordHTTPFlags) register(fs *pflag.FlagSet) {}

// hasUpstream reports whether the server side is an HTTP upstream.
func (f *recordHTTPFlags) hasUpstream() bool { return false }

// enabled reports whether either side is HTTP, so run replaces the stdio tap.
func (f *recordHTTPFlags) enabled() bool { return false }

// meta fills in the cassette's description of the recorded server.
func (f *recordHTTPFlags) meta(m *cassettes.Meta) {}

// run runs the tap with HTTP on one side or both and returns the exit status.
func (f *recordHTTPFlags) run(ctx context.Context, e *env, argv []string, rec *recorder.Recorder, log *slog.Logger) (int, error) {
	return 0, nil
}
