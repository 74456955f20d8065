package main

import (
	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/replayer"
)

// protocolFlags are replay's flags for protocol behaviour: re-paged lists.
type protocolFlags struct {
	pageSize int
}

func (p *protocolFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&p.pageSize, "page-size", 0, "re-page the recorded tools, resources, templates and prompts into pages of N with opaque cursors (0: as recorded, or the cassette's replay.pageSize)")
}

func (p *protocolFlags) apply(opts *replayer.Options) error {
	if p.pageSize < 0 {
		return usagef("--page-size must not be negative (got %d)", p.pageSize)
	}
	opts.PageSize = p.pageSize
	return nil
}
