// Command mcpmock records Model Context Protocol traffic into cassettes and
// plays it back as a mock MCP server.
//
//	mcpmock record -c CASSETTE [flags] -- COMMAND [ARG...]
//	mcpmock record -c CASSETTE [flags] --upstream URL
//	mcpmock replay -c CASSETTE [flags]
//	mcpmock run -c [NAME=]CASSETTE... [flags] -- COMMAND [ARG...]
//	mcpmock demo
//	mcpmock cassette lint|show CASSETTE
//	mcpmock version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcpmock/mcpmock/internal/closest"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/rusage"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "v0.1.0-dev"

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// A client that closes the pipe it reads our stdout from must not kill
	// mcpmock with SIGPIPE before the cassette is saved: asking for the
	// signal turns the write into an EPIPE error, which the tap handles.
	// (Not signal.Ignore: an ignored signal stays ignored in the server
	// that record starts.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	env := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, signals: sigs}
	stopProfile := startProfile(os.Getenv("MCPMOCK_CPUPROFILE"))
	err := env.run(context.Background(), os.Args[1:])
	stopProfile()
	writeRusage(os.Getenv("MCPMOCK_RUSAGE"))
	os.Exit(exitCode(err, os.Stderr))
}

// startProfile writes a CPU profile to path when it is set (the
// MCPMOCK_CPUPROFILE environment variable, for finding costs by profiling);
// the returned function stops it. A %p in path is the process id, so that
// the mcpmock processes of one run (a tap and a replay) write a profile
// each.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpmock: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "mcpmock: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// writeRusage appends the CPU time mcpmock itself used (user and system
// seconds, its children not counted) as a line to path when it is set (the
// MCPMOCK_RUSAGE environment variable), to compare two builds by the CPU
// they use as well as by their throughput.
func writeRusage(path string) {
	if path == "" {
		return
	}
	u, ok := rusage.Self()
	if !ok {
		fmt.Fprintf(os.Stderr, "mcpmock: rusage: not known on %s\n", runtime.GOOS)
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpmock: rusage: %v\n", err)
		return
	}
	fmt.Fprintf(f, "%.6f %.6f\n", u.User.Seconds(), u.System.Seconds())
	f.Close()
}

// env is what a run of mcpmock talks to; tests make their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// signals delivers SIGINT and SIGTERM; nil in tests that send none.
	signals <-chan os.Signal
}

// run is mcpmock with its arguments, for main and for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return (&env{stdin: stdin, stdout: stdout, stderr: stderr}).run(ctx, args)
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitStatus carries an exit status chosen by a command (the recorded
// server's status, for record).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var es exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &es):
		return int(es)
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpmock: %v\nRun 'mcpmock help' for usage.\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "mcpmock: %v\n", err)
	return 1
}

const usage = `mcpmock records Model Context Protocol traffic and plays it back.

Usage:
  mcpmock record -c CASSETTE [flags] -- COMMAND [ARG...]   record a stdio server's session
  mcpmock record -c CASSETTE [flags] --upstream URL        record an HTTP server's session
  mcpmock replay -c CASSETTE [flags]                       serve a cassette on stdio, or HTTP with --listen
  mcpmock run -c [NAME=]CASSETTE... [flags] -- COMMAND...  serve cassettes to a test suite in any language
  mcpmock view [flags] CASSETTE...                         look at cassettes in the browser (or --html FILE)
  mcpmock demo                                             record and replay the bundled weather example
  mcpmock cassette lint CASSETTE...                        check cassettes
  mcpmock cassette show CASSETTE                           print a cassette as a timeline
  mcpmock cassette redact -c CASSETTE [flags]              apply redaction rules to a cassette in place
  mcpmock cassette verify -c CASSETTE -- COMMAND           the drift check against the live server (or --upstream URL)
  mcpmock cassette diff A B                                what changed from cassette A to B (--json, --breaking)
  mcpmock cassette import --from FORMAT FILE -c CASSETTE   a cassette from a HAR, a line log or an mcpsnoop trace
  mcpmock version

Run 'mcpmock COMMAND --help' for the flags of a command.
`

func (e *env) run(ctx context.Context, args []string) error {
	defer livelog.FlushAll() // the live log's lines that wait (commands.go)
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "record":
		return e.record(ctx, args[1:])
	case "replay":
		return e.replay(ctx, args[1:])
	case "run":
		return e.runCommand(ctx, args[1:])
	case connectCommand:
		return e.connect(ctx, args[1:])
	case "view":
		return e.view(ctx, args[1:])
	case "demo":
		return e.demo(ctx, args[1:])
	case "cassette":
		return e.cassette(ctx, args[1:])
	case "version", "--version":
		fmt.Fprintf(e.stdout, "mcpmock %s\n", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage)
		return nil
	case internalWeatherServer:
		return serveWeather(ctx, e.stdin, e.stdout)
	}
	commands := []string{"record", "replay", "run", "view", "demo", "cassette", "version", "help"}
	if best, ok := closest.Name(args[0], commands); ok && best != args[0] {
		return usagef("unknown command %q; did you mean %q?", args[0], best)
	}
	return usagef("unknown command %q", args[0])
}
