package main

import (
	"context"
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// cassetteVerify is "mcpmock cassette verify": the drift check. It replays
// the cassette's client requests against the live server and reports what
// differs, as cassette diff does (cassettes.Drift, docs/diff.md). Breaking
// drift fails the command; with --fail-on-change any drift does.
func (e *env) cassetteVerify(ctx context.Context, args []string) error {
	var path, upstream string
	var failOnChange bool
	fs := newFlagSet("cassette verify", "mcpmock cassette verify -c CASSETTE [flags] -- COMMAND [ARG...]\n  mcpmock cassette verify -c CASSETTE [flags] --upstream URL", e.stdout)
	fs.StringVarP(&path, "cassette", "c", "", "cassette file (required)")
	fs.StringVar(&upstream, "upstream", "", "the live server at `URL` (Streamable HTTP, or an HTTP+SSE server at its SSE URL) instead of a command")
	fs.BoolVar(&failOnChange, "fail-on-change", false, "also fail when results changed or the change is not breaking")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if path == "" {
		return usagef("cassette verify needs -c CASSETTE")
	}
	if (fs.NArg() == 0) == (upstream == "") {
		return usagef("cassette verify needs the live server: -- COMMAND [ARG...] or --upstream URL")
	}
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	up, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: fs.Args(), URL: upstream, Stderr: e.stderr})
	if err != nil {
		return err
	}
	defer up.Close()
	changes, err := cassettes.Drift(ctx, c, up)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		fmt.Fprintln(e.stdout, ch)
	}
	breaking := changes.Breaking()
	other := len(changes) - breaking
	switch {
	case breaking > 0:
		return fmt.Errorf("%s: breaking drift: %d breaking and %d other differences from the live server", path, breaking, other)
	case other > 0 && failOnChange:
		return fmt.Errorf("%s: drift: %d differences from the live server", path, other)
	case other > 0:
		fmt.Fprintf(e.stdout, "%s: %d differences, none breaking\n", path, other)
	default:
		fmt.Fprintf(e.stdout, "%s: no drift\n", path)
	}
	return nil
}
