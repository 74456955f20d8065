package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/internal/closest"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// common are the flags every serving command has.
type common struct {
	cassette string
	log      string
	quiet    bool
	ui       string // --ui ADDR: the web view of the live traffic
}

func (c *common) register(fs *pflag.FlagSet) {
	fs.StringVarP(&c.cassette, "cassette", "c", "", "cassette file (required)")
	fs.StringVar(&c.log, "log", "text", `live log format on stderr: "text" or "json"`)
	fs.BoolVar(&c.quiet, "quiet", false, "no live log")
	fs.StringVar(&c.ui, "ui", "", "serve the web view of the traffic as it passes on `ADDR` (loopback; port 0 takes a free port); its URL is printed on stderr")
}

// logger builds the live log's logger.
func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	switch {
	case c.quiet, toNowhere(stderr):
		return livelog.Discard, nil
	case c.log == "text":
		// The lines of messages go in batches, a few milliseconds at most
		// (TextHandler.Batched); run writes what waits before it returns.
		h := livelog.NewTextHandler(stderr).Batched()
		if g, ok := stderr.(*livelog.Gate); (ok && isTerminal(g.Writer())) || isTerminal(stderr) {
			h = h.Colored() // on a terminal only, as cassette show
		}
		return slog.New(h), nil
	case c.log == "json":
		return slog.New(slog.NewJSONHandler(stderr, nil)), nil
	}
	return nil, usagef("--log must be text or json, not %q", c.log)
}

// toNowhere reports whether w, stderr, is the null device: what a client
// that starts mcpmock gives it when it keeps no stderr of its own (the
// go-sdk's CommandTransport, exec.Cmd's nil Stderr). The live log's lines
// would cost their making and their writes for no one: 2 to 3 µs of a
// replayed stdio call's 20 to 25.
func toNowhere(w io.Writer) bool {
	if g, ok := w.(*livelog.Gate); ok {
		w = g.Writer()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// summaryLogger prints the exit summary even with --quiet.
func (c *common) summaryLogger(stderr io.Writer) *slog.Logger {
	if c.log == "json" {
		return slog.New(slog.NewJSONHandler(stderr, nil))
	}
	return slog.New(livelog.NewTextHandler(stderr))
}

// newFlagSet makes the flag set of a command. Its --help goes to help
// (stdout: help is what was asked for, and `| less` shows it), with the
// command's synopsis, flags and examples; a mistake is returned by parse as a
// usage error, which the caller prints on stderr.
func newFlagSet(name, synopsis string, help io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse returns the errors; nobody prints them twice
	fs.Usage = func() {
		fmt.Fprintf(help, "Usage:\n  %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
		if ex := examples(name); ex != "" {
			fmt.Fprintf(help, "\nExamples:\n%s", ex)
		}
	}
	return fs
}

// parse parses flags; --help is not an error. An unknown flag that is a
// typo of a known one says which.
func parse(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, usagef("%v%s", err, didYouMean(fs, err))
	}
	return false, nil
}

// didYouMean returns "; did you mean --NAME?" when err is about an unknown
// flag that is a typo of a flag of fs, and "" otherwise.
func didYouMean(fs *pflag.FlagSet, err error) string {
	_, name, ok := strings.Cut(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if best, ok := closest.Name(name, names); ok {
		return "; did you mean --" + best + "?"
	}
	return ""
}
