package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

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

// notifyOnSignal sends notifications/tools/list_changed to every live
// session each time the process gets SIGUSR1, until ctx ends.
func notifyOnSignal(ctx context.Context, eng *replayer.Engine, log *slog.Logger) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ch:
				n := eng.Notify("notifications/tools/list_changed", nil)
				log.Info(fmt.Sprintf("SIGUSR1: sent notifications/tools/list_changed to %d sessions", n))
			case <-ctx.Done():
				return
			}
		}
	}()
}
