package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

func (e *env) replay(ctx context.Context, args []string) error {
	var c common
	var strict, noValidate bool
	var h replayHTTPFlags // replay_http.go: --listen and the listener's safety
	var m matchFlags      // replay_match.go: matcher flags
	var f faultFlags      // replay_faults.go: overlays, faults, seed, latency
	fs := newFlagSet("replay", "mcpmock replay -c CASSETTE [flags]", e.stdout)
	c.register(fs)
	fs.BoolVar(&strict, "strict", false, "answer each recorded interaction at most once (a repeat is a miss)")
	fs.BoolVar(&noValidate, "no-validate", false, "do not check tools/call arguments against the recorded inputSchema")
	h.register(fs)
	m.register(fs)
	f.register(fs)
	var pf protocolFlags // replay_protocol.go: --page-size
	pf.register(fs)
	var mf modeFlags // modes.go: --mode and the live server
	mf.register(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if c.cassette == "" {
		return usagef("replay needs -c CASSETTE")
	}
	plan, err := mf.decide(c.cassette, fs.Args())
	if err != nil {
		return err
	}
	if plan.Live && !plan.Replay {
		return e.runLive(ctx, &c, &mf, &h, fs.Args(), plan)
	}
	if fs.NArg() > 0 && !mf.decideKeepsArgs() {
		return usagef("replay takes no arguments (got %q)", strings.Join(fs.Args(), " "))
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	cas, err := cassettes.Load(c.cassette)
	if err != nil {
		return err
	}
	if err := mf.checkAge(cas, c.summaryLogger(e.stderr), time.Now()); err != nil {
		return err
	}
	opts := &replayer.Options{Logger: log, Strict: strict, NoSchemaValidation: noValidate}
	if err := m.apply(cas, opts); err != nil {
		return err
	}
	if err := f.apply(opts); err != nil {
		return err
	}
	if err := pf.apply(opts); err != nil {
		return err
	}
	if plan.Append {
		// new-episodes: misses go to the live server.
		u, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: fs.Args(), URL: mf.upstream, Stderr: e.stderr})
		if err != nil {
			return err
		}
		defer u.Close()
		opts.Upstream = u
	}
	eng, err := replayer.New(cas, opts)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(c.cassette); err == nil {
		limitMemory(fi.Size()) // replay_memory.go
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notifyOnSignal(ctx, eng, log) // replay_protocol.go: SIGUSR1 sends a tools/list_changed
	go func() {
		select {
		case <-e.signals:
			cancel()
		case <-ctx.Done():
		}
	}()
	var serveErr error
	if h.enabled() {
		serveErr = h.serve(ctx, e, eng, log)
	} else {
		serveErr = eng.Serve(ctx, e.stdin, e.stdout)
	}
	if errors.As(serveErr, new(notServed)) {
		return serveErr
	}
	c.summaryLogger(e.stderr).Info("replayed " + eng.Stats().String())
	if eps := eng.NewEpisodes(); len(eps) > 0 {
		if err := mf.appendEpisodes(c.cassette, eps); err != nil {
			return err
		}
		c.summaryLogger(e.stderr).Info(fmt.Sprintf("appended %d new episodes to %s", len(eps), c.cassette))
	}
	if mf.dropUnused {
		n, err := dropUnused(c.cassette, cas, eng)
		if err != nil {
			return err
		}
		c.summaryLogger(e.stderr).Info(fmt.Sprintf("dropped %d unused interactions from %s", n, c.cassette))
	}
	var exit *replayer.ExitError
	if errors.As(serveErr, &exit) {
		return exitStatus(exit.Status)
	}
	return serveErr
}
