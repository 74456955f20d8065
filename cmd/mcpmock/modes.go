package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// modeFlags are replay's --mode (cassettes.Decide is the decision table)
// and what the modes that talk to a live server need.
type modeFlags struct {
	mode       string
	upstream   string
	keepTiming bool
	dropUnused bool
	maxAge     time.Duration
	maxAgeFail bool
	redact     redactFlags
}

func (f *modeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "mode", "replay", "replay, record (forward and write a new cassette), once (replay if the cassette exists, else record), new-episodes (replay, forward a miss and append it) or passthrough (forward, write nothing); the live server is -- COMMAND or --upstream URL")
	fs.StringVar(&f.upstream, "upstream", "", "the live server at `URL` (Streamable HTTP, or an HTTP+SSE server at its SSE URL) for the modes that need one")
	fs.BoolVar(&f.keepTiming, "keep-timing", false, "when recording, keep the time offsets (atMs) instead of writing 0 (needed for --latency recorded)")
	fs.BoolVar(&f.dropUnused, "drop-unused", false, "on exit, remove the recorded requests that no client used from the cassette")
	fs.DurationVar(&f.maxAge, "max-age", 0, "warn when the cassette was recorded longer than `DURATION` ago (meta.recordedAt; e.g. 720h)")
	fs.BoolVar(&f.maxAgeFail, "max-age-fail", false, "fail instead of warning when the cassette is older than --max-age")
	f.redact.register(fs)
}

// checkAge warns (or fails, with --max-age-fail) when the cassette is older
// than --max-age.
func (f *modeFlags) checkAge(c *cassettes.Cassette, log *slog.Logger, now time.Time) error {
	if f.maxAge <= 0 {
		return nil
	}
	age, ok := c.AgeAt(now)
	if !ok {
		log.Warn("the cassette has no recordedAt: its age is unknown")
		return nil
	}
	if age.Exceeds(f.maxAge) {
		msg := fmt.Sprintf("the cassette was recorded %s (%s ago), longer ago than --max-age %s: record it again or check it with mcpmock cassette verify", c.Meta.RecordedAt, age, f.maxAge)
		if f.maxAgeFail {
			return errors.New(msg)
		}
		log.Warn(msg)
	}
	return nil
}

// decide returns the plan of the run (see cassettes.Decide).
func (f *modeFlags) decide(path string, argv []string) (cassettes.Plan, error) {
	m, err := cassettes.ParseMode(f.mode)
	if err != nil {
		return cassettes.Plan{}, usagef("--mode: %v", err)
	}
	_, statErr := os.Stat(path)
	plan := cassettes.Decide(m, statErr == nil)
	live := len(argv) > 0 || f.upstream != ""
	switch {
	case plan.Live && !live:
		return plan, usagef("--mode %s needs the live server now: -- COMMAND [ARG...] or --upstream URL", m)
	case !plan.Live && len(argv) > 0:
		// once, replaying: the command is not needed, and not started.
	case len(argv) > 0 && f.upstream != "":
		return plan, usagef("give the live server as -- COMMAND or as --upstream URL, not both")
	}
	return plan, nil
}

// saveOptions are the recorder's save options from the flags.
func (f *modeFlags) saveOptions() (cassettes.SaveOptions, error) {
	rules, err := f.redact.rules()
	if err != nil {
		return cassettes.SaveOptions{}, err
	}
	return cassettes.SaveOptions{Redact: rules, NoDefaultRedact: true, KeepTiming: f.keepTiming}, nil
}

// runLive runs the modes that only forward: record (a new cassette) and
// passthrough (no cassette), through the same tap as mcpmock record.
func (e *env) runLive(ctx context.Context, c *common, f *modeFlags, h *replayHTTPFlags, argv []string, plan cassettes.Plan) error {
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	save, err := f.saveOptions()
	if err != nil {
		return err
	}
	path := c.cassette
	if !plan.Write {
		path = ""
	}
	rh := recordHTTPFlags{upstream: f.upstream, listen: h.listen, authToken: h.authToken, allowOrigins: h.allowOrigins, allowRemote: h.allowRemote}
	meta := cassettes.Meta{RecordedBy: "mcpmock " + version, Transport: "stdio", Server: argv}
	rh.meta(&meta)
	rec, err := recorder.New(path, &recorder.Options{Logger: log, Meta: meta, Save: save})
	if err != nil {
		return err
	}
	var status int
	var runErr error
	if rh.enabled() {
		status, runErr = rh.run(ctx, e, argv, rec, log)
	} else {
		roomForForwarders()
		status, runErr = recorder.Stdio(ctx, argv, e.stdin, e.stdout, e.stderr, rec, &recorder.StdioOptions{Signals: e.signals})
	}
	prefix := ""
	if plan.Mode == cassettes.ModePassthrough {
		prefix = "passthrough: "
	}
	return e.endRecording(c, rec, prefix, status, runErr)
}

// dropUnused rewrites the cassette without the recorded client requests
// that the engine never used.
func dropUnused(path string, c *cassettes.Cassette, eng *replayer.Engine) (int, error) {
	unused := eng.Unused()
	if len(unused) == 0 {
		return 0, nil
	}
	out := *c
	out.Interactions = nil
	for i, in := range c.Interactions {
		if !slices.Contains(unused, i+1) {
			out.Interactions = append(out.Interactions, in)
		}
	}
	if err := cassettes.Save(path, &out); err != nil {
		return 0, err
	}
	return len(unused), nil
}

// appendEpisodes adds what new-episodes learnt to the cassette file, with
// the same redaction and normalising as a recording's saves.
func (f *modeFlags) appendEpisodes(path string, eps []cassettes.Interaction) error {
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	c.Interactions = append(c.Interactions, eps...)
	save, err := f.saveOptions()
	if err != nil {
		return err
	}
	fin, err := cassettes.NewFinisher(&save)
	if err != nil {
		return err
	}
	fin.Finish(c)
	return cassettes.Save(path, c)
}

// decideKeepsArgs reports whether a replaying run may have been given a
// command: a mode that may need the live server (once).
func (f *modeFlags) decideKeepsArgs() bool {
	m, _ := cassettes.ParseMode(f.mode)
	return m != cassettes.ModeReplay
}
