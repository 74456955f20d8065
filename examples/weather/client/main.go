// Command client is the weather example's MCP client. It starts the server
// command given after "--", speaks to it over stdio, calls get_weather for New
// York, London and Atlantis, and prints one line per result.
//
//	go run ./examples/weather/client -- go run ./examples/weather/server
//	go run ./examples/weather/client -library mcp-go -- go run ./examples/weather/server
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpmock/mcpmock/examples/weather"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts weather.ClientOptions
	fs.StringVar(&opts.Library, "library", weather.GoSDK, "client library: go-sdk or mcp-go")
	fs.StringVar(&opts.ProtocolVersion, "protocol-version", "", `protocol version to ask for ("" = the library's default)`)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: client [-library go-sdk|mcp-go] [-protocol-version V] -- COMMAND [ARG...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{errors.New("client: no server command")}
	}
	lines, err := weather.RunCommand(ctx, fs.Args(), stderr, opts)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return err
}
