package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/hugepage"
	"github.com/mcpmock/mcpmock/replayer"
)

// replayFlags are the flags of serving a cassette, shared by replay and run
// (each registers the cassette flag its own way: one for replay, several
// for run).
type replayFlags struct {
	strict, noValidate, allowMisses bool
	report                          string // --report FILE (run_report.go)

	h  replayHTTPFlags // replay_http.go: --listen and the listener's safety
	m  matchFlags      // replay_match.go: matcher flags
	f  faultFlags      // replay_faults.go: overlays, faults, seed, latency
	pf protocolFlags   // replay_protocol.go: --page-size
	mf modeFlags       // modes.go: --mode and the live server
}

func (r *replayFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&r.strict, "strict", false, "answer each recorded interaction at most once (a repeat is a miss)")
	fs.BoolVar(&r.noValidate, "no-validate", false, "do not check tools/call arguments against the recorded inputSchema")
	fs.BoolVar(&r.allowMisses, "allow-misses", false, "exit 0 even when a request matched nothing (by default a miss is a failure: exit status 1)")
	fs.StringVar(&r.report, "report", "", "at the end, write a JSON report to `FILE` (sessions, matched, missed with explanations, unused, faults fired and never fired)")
	r.h.register(fs)
	r.m.register(fs)
	r.f.register(fs)
	r.pf.register(fs)
	r.mf.register(fs)
}

// options are the engine's options for cas from the flags.
func (r *replayFlags) options(cas *cassettes.Cassette, log *slog.Logger) (*replayer.Options, error) {
	opts := &replayer.Options{Logger: log, Strict: r.strict, NoSchemaValidation: r.noValidate}
	if err := r.m.apply(cas, opts); err != nil {
		return nil, err
	}
	if err := r.f.apply(opts); err != nil {
		return nil, err
	}
	if err := r.pf.apply(opts); err != nil {
		return nil, err
	}
	return opts, nil
}

func (e *env) replay(ctx context.Context, args []string) error {
	var c common
	var r replayFlags
	fs := newFlagSet("replay", "mcpmock replay -c CASSETTE [flags]", e.stdout)
	c.register(fs)
	r.register(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if c.cassette == "" {
		return usagef("replay needs -c CASSETTE")
	}
	started := time.Now()
	h, mf := &r.h, &r.mf
	plan, err := mf.decide(c.cassette, fs.Args())
	if err != nil {
		return err
	}
	if plan.Live && !plan.Replay {
		return e.runLive(ctx, &c, mf, h, fs.Args(), plan)
	}
	if fs.NArg() > 0 && !mf.decideKeepsArgs() {
		return usagef("replay takes no arguments (got %q)", strings.Join(fs.Args(), " "))
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	log, stopUI, err := c.withUI(ctx, e, filepath.Base(c.cassette), log)
	if err != nil {
		return err
	}
	defer stopUI()
	cas, err := cassettes.Load(c.cassette)
	if err != nil {
		return err
	}
	if err := mf.checkAge(cas, c.summaryLogger(e.stderr), time.Now()); err != nil {
		return err
	}
	opts, err := r.options(cas, log)
	if err != nil {
		return err
	}
	// A miss is a request the cassette does not hold (explained, OnMiss);
	// a refusal by the protocol itself (a version the recording does not
	// speak, as the recorded server would refuse it) is not one.
	misses := &missLog{} // run_serve.go
	opts.OnMiss = misses.add
	// The soft memory limit is set once the engine is built (it counts
	// the engine's memory), before it serves; requests that wait for
	// their answers grow it.
	var mem *memoryLimit // replay_memory.go
	opts.Waiting = func(delta int) {
		if mem != nil {
			mem.wait(delta)
		}
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
	replayingUI(log, cas, eng) // ui.go
	stdin := e.stdin
	if fi, err := os.Stat(c.cassette); err == nil {
		if limit := limitMemory(fi.Size()); limit > 0 {
			mem = newMemoryLimit(limit)
			stdin = &headroom{r: stdin, m: mem}
		}
		if fi.Size() >= hugepage.MinBytes {
			// A call reads places scattered over the whole cassette;
			// with small pages each also misses the TLB.
			hugepage.Back(hugepage.MinBytes)
		}
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
		defer oneThread()() // replay_http.go
		serveErr = h.serve(ctx, e, eng, log, mem)
	} else {
		serveErr = eng.Serve(ctx, stdin, e.stdout)
	}
	if errors.As(serveErr, new(notServed)) {
		return serveErr
	}
	c.summaryLogger(e.stderr).Info("replayed " + eng.Stats().String())
	for _, sc := range eng.Scripts() {
		if sc.Fired == 0 { // a script the run meant to exercise and did not
			c.summaryLogger(e.stderr).Info("never fired: " + scriptSource(sc, &r.f))
		}
	}
	afterErr := mf.afterReplay(c.cassette, cas, eng, c.summaryLogger(e.stderr))
	if r.report != "" {
		name := strings.TrimSuffix(filepath.Base(c.cassette), filepath.Ext(c.cassette))
		t := &servedTarget{runTarget: &runTarget{name: name, path: c.cassette, plan: plan}, cas: cas}
		res := runResult{target: t, serveErr: afterErr, stats: eng.Stats(), misses: misses.list(), missed: misses.n.Load(), unused: eng.Unused(), scripts: eng.Scripts()}
		var exit *replayer.ExitError
		if !errors.As(serveErr, &exit) {
			res.serveErr = errors.Join(serveErr, afterErr)
		}
		rep := newRunReport(nil, started, 0, nil, []runResult{res}, &r, &runFlags{})
		if exit != nil {
			rep.ExitStatus, rep.Failures = exit.Status, append(rep.Failures, exit.Error())
		}
		if err := rep.write(r.report, ""); err != nil {
			return err
		}
	}
	if afterErr != nil {
		return afterErr
	}
	var exit *replayer.ExitError
	if errors.As(serveErr, &exit) {
		return exitStatus(exit.Status)
	}
	if serveErr != nil {
		return serveErr
	}
	return missed(misses.n.Load(), r.allowMisses)
}

// afterReplay writes what the replay of the cassette at path changes in
// it: the new episodes of new-episodes, and with --drop-unused, the
// requests no client used.
func (f *modeFlags) afterReplay(path string, cas *cassettes.Cassette, eng *replayer.Engine, log *slog.Logger) error {
	if eps := eng.NewEpisodes(); len(eps) > 0 {
		if err := f.appendEpisodes(path, eps); err != nil {
			return err
		}
		log.Info(fmt.Sprintf("appended %d new episodes to %s", len(eps), path))
	}
	if f.dropUnused {
		n, err := dropUnused(path, cas, eng)
		if err != nil {
			return err
		}
		log.Info(fmt.Sprintf("dropped %d unused interactions from %s", n, path))
	}
	return nil
}

// missed is the failure of a replay in which n requests matched nothing
// (DESIGN.md, "Command line": a miss is a test failure, exit status 1),
// nil when none did or allowMisses.
func missed(n int64, allowMisses bool) error {
	if n == 0 || allowMisses {
		return nil
	}
	what := "requests"
	if n == 1 {
		what = "request"
	}
	return fmt.Errorf("%d %s matched nothing in the cassette: a miss fails the run (the log above explains each; --allow-misses exits 0)", n, what)
}
