package main

import (
	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// matchFlags are replay's matcher flags. Placeholder until configurable
// matchers land.
type matchFlags struct{}

func (f *matchFlags) register(fs *pflag.FlagSet) {}

// apply sets the matching of opts from the flags (and the cassette's own
// configuration).
func (f *matchFlags) apply(c *cassettes.Cassette, opts *replayer.Options) error { return nil }
