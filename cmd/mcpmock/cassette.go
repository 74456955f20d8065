package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/replayer"
)

func (e *env) cassette(_ context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("cassette needs a subcommand: lint or show")
	}
	switch args[0] {
	case "lint":
		fs := newFlagSet("cassette lint", "mcpmock cassette lint CASSETTE...", e.stderr)
		if help, err := parse(fs, args[1:]); help || err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return usagef("cassette lint needs a cassette file")
		}
		failed := 0
		for _, path := range fs.Args() {
			c, err := lintCassette(path)
			if err != nil {
				fmt.Fprintln(e.stderr, err)
				failed++
				continue
			}
			fmt.Fprintf(e.stdout, "%s: ok (%d interactions)\n", path, len(c.Interactions))
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d cassettes have errors", failed, fs.NArg())
		}
		return nil
	case "show":
		fs := newFlagSet("cassette show", "mcpmock cassette show CASSETTE", e.stderr)
		if help, err := parse(fs, args[1:]); help || err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usagef("cassette show needs one cassette file")
		}
		c, err := cassettes.Load(fs.Arg(0))
		if err != nil {
			return err
		}
		return showTimeline(e.stdout, c, isTerminal(e.stdout))
	}
	return usagef("unknown cassette subcommand %q (want lint or show)", args[0])
}

// lintCassette loads a cassette, checks its matcher configurations with
// their positions, and prepares it for replay.
func lintCassette(path string) (*cassettes.Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load cassette: %w", err)
	}
	c, err := cassettes.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if err := matcher.CheckCassette(path, data); err != nil {
		return nil, err
	}
	if _, err := replayer.New(c, nil); err != nil {
		return nil, err
	}
	return c, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
