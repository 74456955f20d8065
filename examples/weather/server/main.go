// Command server is the weather example's MCP server on stdio.
//
//	go run ./examples/weather/server
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpmock/mcpmock/examples/weather"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := weather.Serve(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "weather server:", err)
		os.Exit(1)
	}
}
