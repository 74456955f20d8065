package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/internal/livelog"
)

// common are the flags every serving command has.
type common struct {
	cassette string
	log      string
	quiet    bool
}

func (c *common) register(fs *pflag.FlagSet) {
	fs.StringVarP(&c.cassette, "cassette", "c", "", "cassette file (required)")
	fs.StringVar(&c.log, "log", "text", `live log format on stderr: "text" or "json"`)
	fs.BoolVar(&c.quiet, "quiet", false, "no live log")
}

// logger builds the live log's logger.
func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	switch {
	case c.quiet:
		return livelog.Discard, nil
	case c.log == "text":
		return slog.New(livelog.NewTextHandler(stderr)), nil
	case c.log == "json":
		return slog.New(slog.NewJSONHandler(stderr, nil)), nil
	}
	return nil, usagef("--log must be text or json, not %q", c.log)
}

// summaryLogger prints the exit summary even with --quiet.
func (c *common) summaryLogger(stderr io.Writer) *slog.Logger {
	if c.log == "json" {
		return slog.New(slog.NewJSONHandler(stderr, nil))
	}
	return slog.New(livelog.NewTextHandler(stderr))
}

func newFlagSet(name, synopsis string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage:\n  %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
	}
	return fs
}

// parse parses flags; --help is not an error.
func parse(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, usagef("%v", err)
	}
	return false, nil
}
