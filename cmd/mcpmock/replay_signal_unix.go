//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpmock/mcpmock/replayer"
)

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
