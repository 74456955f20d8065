package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/recorder"
)

func (e *env) record(ctx context.Context, args []string) error {
	var c common
	var h recordHTTPFlags  // record_http.go: --listen, --upstream
	var g guardFlags       // record_guard.go: --deny-tools, --confirm, --call-timeout...
	var fb forbidFlags     // record_forbid.go: --forbid, --forbid-env
	var sf recordSaveFlags // record_save.go: --redact-*, --keep-timing
	var report string      // --report FILE (run_report.go)
	fs := newFlagSet("record", "mcpmock record -c CASSETTE [flags] -- COMMAND [ARG...]\n  mcpmock record -c CASSETTE [flags] --upstream URL", e.stdout)
	c.register(fs)
	h.register(fs)
	g.register(fs)
	fb.register(fs)
	sf.register(fs)
	fs.StringVar(&report, "report", "", "at the end, write a JSON report to `FILE` (what was recorded, the server's status, the exit status)")
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
	// The live log goes through a gate that the guard holds while it asks a
	// person on the terminal, so that no line lands on its prompt.
	gate := livelog.NewGate(e.stderr)
	log, err := c.logger(gate)
	if err != nil {
		return err
	}
	log, stopUI, err := c.withUI(ctx, e, filepath.Base(c.cassette), log)
	if err != nil {
		return err
	}
	defer stopUI()
	if log, err = fb.liveLog(log, ro.Save); err != nil { // record_forbid.go
		return err
	}
	so := &recorder.StdioOptions{Signals: e.signals}
	closeGuard, err := g.apply(so, &h, gate, log)
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
	defer lessCollection()() // procs.go
	started := time.Now()
	var status int
	var runErr error
	if h.enabled() {
		status, runErr = h.run(ctx, e, argv, rec, log)
	} else {
		roomForForwarders()
		status, runErr = recorder.Stdio(ctx, argv, e.stdin, e.stdout, e.stderr, rec, so)
	}
	err = e.endRecording(&c, rec, "", status, runErr)
	return writeRecordReport(report, c.cassette, rec, status, err, started)
}

// endRecording closes the recorder at the end of a recording run and
// says how it went: the error that ended the tap first, then the summary,
// which says what the file holds (recorder.Summary: nothing, when no
// interaction completed or every save failed). A save error was shown by
// the live log as it happened (recorder.Close); with --quiet it is printed
// here, once. The exit status is the error's, else 1 for a failed save,
// else the server's.
func (e *env) endRecording(c *common, rec *recorder.Recorder, prefix string, status int, runErr error) error {
	closeErr := rec.Close()
	code := 0
	if runErr != nil {
		code = exitCode(runErr, e.stderr)
	}
	if closeErr != nil && c.quiet {
		fmt.Fprintf(e.stderr, "mcpmock: %v\n", closeErr)
	}
	c.summaryLogger(e.stderr).Info(prefix + rec.Summary())
	switch {
	case runErr != nil:
		return exitStatus(code)
	case closeErr != nil:
		return exitStatus(1)
	case status != 0:
		return exitStatus(status)
	}
	return nil
}
