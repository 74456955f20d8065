package main

import (
	"context"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
)

func (e *env) record(ctx context.Context, args []string) error {
	var c common
	var h recordHTTPFlags  // record_http.go: --listen, --upstream
	var g guardFlags       // record_guard.go: --deny-tools, --confirm, --call-timeout...
	var fb forbidFlags     // record_forbid.go: --forbid, --forbid-env
	var sf recordSaveFlags // record_save.go: --redact-*, --keep-timing
	fs := newFlagSet("record", "mcpmock record -c CASSETTE [flags] -- COMMAND [ARG...]\n  mcpmock record -c CASSETTE [flags] --upstream URL", e.stderr)
	c.register(fs)
	h.register(fs)
	g.register(fs)
	fb.register(fs)
	sf.register(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if c.cassette == "" {
		return usagef("record needs -c CASSETTE")
	}
	argv := fs.Args()
	if len(argv) == 0 && !h.hasUpstream() {
		return usagef("record needs the server command after --: mcpmock record -c %s -- COMMAND [ARG...]", c.cassette)
	}
	var ro recorder.Options
	if err := sf.apply(&ro); err != nil {
		return err
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	if log, err = fb.liveLog(log, ro.Save); err != nil { // record_forbid.go
		return err
	}
	so := &recorder.StdioOptions{Signals: e.signals}
	closeGuard, err := g.apply(so, &h, e.stderr, log)
	if err != nil {
		return err
	}
	defer closeGuard()
	meta := cassettes.Meta{RecordedBy: "mcpmock " + version, Transport: "stdio", Server: argv}
	h.meta(&meta)
	ro.Logger, ro.Meta, ro.Forbid = log, meta, fb.forbidden()
	rec, err := recorder.New(c.cassette, &ro)
	if err != nil {
		return err
	}
	var status int
	var runErr error
	if h.enabled() {
		status, runErr = h.run(ctx, e, argv, rec, log)
	} else {
		roomForForwarders()
		status, runErr = recorder.Stdio(ctx, argv, e.stdin, e.stdout, e.stderr, rec, so)
	}
	closeErr := rec.Close()
	c.summaryLogger(e.stderr).Info(rec.Summary())
	if runErr != nil {
		return runErr
	}
	if closeErr != nil {
		return closeErr
	}
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}
