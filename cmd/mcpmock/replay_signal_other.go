//go:build !unix

package main

import (
	"context"
	"log/slog"

	"github.com/mcpmock/mcpmock/replayer"
)

// notifyOnSignal does nothing where there is no SIGUSR1 (Windows).
func notifyOnSignal(ctx context.Context, eng *replayer.Engine, log *slog.Logger) {}
