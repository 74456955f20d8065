package replayer

import (
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// findNoMessages logs what loading the cassette dropped (its Warnings), and
// notes the recorded server lines that are no JSON-RPC
// message (the {} or blank data of an SSE priming event, which an older tap
// recorded as raw lines): replay never sends them, as no client can read
// them. An interaction that scripts one (When or Fault) sends it. It logs
// once how many there are.
func (e *Engine) findNoMessages(c *cassettes.Cassette) {
	for _, w := range c.Warnings {
		e.opts.Logger.Warn("cassette: " + w)
	}
	n := 0
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.Scripted() {
			continue
		}
		if in.From == cassettes.FromServer && in.Raw != nil && jsonrpc.NoMessage([]byte(*in.Raw)) {
			n++
		}
		for _, m := range in.Exchange {
			if m.From == cassettes.FromServer && m.Raw != nil && jsonrpc.NoMessage([]byte(*m.Raw)) {
				if e.silent == nil {
					e.silent = map[*cassettes.Interaction]bool{}
				}
				e.silent[in] = true
				n++
			}
		}
	}
	if n > 0 {
		e.opts.Logger.Warn(fmt.Sprintf("the cassette holds %d server lines that are no JSON-RPC message (the {} or empty data of SSE priming events): replay does not send them (mcpmock cassette lint names them)", n))
	}
}

// skipsRaw reports whether replay leaves out raw, a recorded server line of
// in's exchange (findNoMessages).
func (e *Engine) skipsRaw(in *cassettes.Interaction, raw string) bool {
	return e.silent[in] && jsonrpc.NoMessage([]byte(raw))
}
