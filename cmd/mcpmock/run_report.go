package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// This file is the end of mcpmock run: the summary on stderr, the JSON
// report (--report), the JUnit XML report (--junit) and the exit status.
// /work/notes/i21-run.md (docs/cli.md) documents the report field by field.

// runResult is how the serving of one cassette went.
type runResult struct {
	target   *servedTarget
	serveErr error
	stats    replayer.Stats
	misses   []replayer.Miss
	missed   int64 // misses, including those not kept in misses
	unused   []int
	scripts  []replayer.Script
	recorded string // the recorder's summary, for the recording modes
}

// runReport is the JSON report of a run (--report).
type runReport struct {
	// Version is the version of this format: 1.
	Version       int      `json:"version"`
	Command       []string `json:"command,omitempty"`
	CommandStatus int      `json:"commandStatus"`
	CommandError  string   `json:"commandError,omitempty"`
	// ExitStatus is mcpmock's exit status; Failures say why it is not 0.
	ExitStatus int              `json:"exitStatus"`
	Failures   []string         `json:"failures"`
	StartedAt  time.Time        `json:"startedAt"`
	DurationMs int64            `json:"durationMs"`
	Totals     counts           `json:"totals"`
	Cassettes  []cassetteReport `json:"cassettes"`
}

// counts are the counters of a cassette, or of all of them.
type counts struct {
	Sessions         int64 `json:"sessions"`
	Messages         int64 `json:"messages"`
	Matched          int64 `json:"matched"`
	Missed           int64 `json:"missed"`
	Refused          int64 `json:"refused"`
	Unused           int64 `json:"unused"`
	FaultsFired      int   `json:"faultsFired"`
	FaultsNeverFired int   `json:"faultsNeverFired"`
	// ContractWarnings counts the protocol-contract warnings of the
	// recording modes (docs/contract.md), also those not kept in Contract.
	ContractWarnings int `json:"contractWarnings"`
}

func (c *counts) add(o counts) {
	c.Sessions += o.Sessions
	c.Messages += o.Messages
	c.Matched += o.Matched
	c.Missed += o.Missed
	c.Refused += o.Refused
	c.Unused += o.Unused
	c.FaultsFired += o.FaultsFired
	c.FaultsNeverFired += o.FaultsNeverFired
	c.ContractWarnings += o.ContractWarnings
}

type cassetteReport struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Mode     string `json:"mode"`
	URL      string `json:"url,omitempty"`
	Variable string `json:"variable,omitempty"`
	counts
	Misses             []missReport        `json:"misses"`
	MissesNotKept      int64               `json:"missesNotKept,omitempty"`
	UnusedInteractions []interactionReport `json:"unusedInteractions"`
	Faults             []faultReport       `json:"faults"`
	// Contract are the protocol-contract warnings of a recording, the
	// first 1000 (docs/contract.md); empty when replaying.
	Contract []contractReport `json:"contract"`
	Recorded string           `json:"recorded,omitempty"`
	Error    string           `json:"error,omitempty"`
}

type missReport struct {
	Method      string               `json:"method"`
	Tool        string               `json:"tool,omitempty"`
	Message     string               `json:"message"`
	Explanation string               `json:"explanation"`
	Recorded    bool                 `json:"recorded"`
	Exhausted   bool                 `json:"exhausted,omitempty"`
	Hint        string               `json:"hint,omitempty"`
	Candidates  []replayer.Candidate `json:"candidates"`
}

// contractReport is one protocol-contract warning (recorder.ContractWarning)
// with its JSON-RPC id as JSON.
type contractReport struct {
	Kind    string          `json:"kind"`
	Session int             `json:"session"`
	Message int             `json:"message"`
	ID      json.RawMessage `json:"id,omitempty"`
	From    string          `json:"from"`
	Method  string          `json:"method,omitempty"`
	Detail  string          `json:"detail"`
}

// contractOf is the report of the contract warnings of rec (nil for none).
func contractOf(rec *recorder.Recorder) ([]contractReport, int) {
	out := []contractReport{}
	if rec == nil {
		return out, 0
	}
	ws, n := rec.ContractWarnings()
	for _, w := range ws {
		cr := contractReport{Kind: w.Kind, Session: w.Session, Message: w.Message, From: w.From, Method: w.Method, Detail: w.Detail}
		if w.ID != "" {
			cr.ID = json.RawMessage(w.ID)
		}
		out = append(out, cr)
	}
	return out, n
}

type interactionReport struct {
	Interaction int    `json:"interaction"`
	Method      string `json:"method"`
	Tool        string `json:"tool,omitempty"`
}

type faultReport struct {
	Source string `json:"source"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	Fired  int64  `json:"fired"`
}

// newRunReport puts the results of a run together and decides its exit
// status: the command's when it failed, else 1 when a cassette's server
// failed, a request missed (unless --allow-misses) or, with
// --fail-on-unused, a recorded request went unused.
func newRunReport(argv []string, started time.Time, status int, cmdErr error, results []runResult, r *replayFlags, rf *runFlags) *runReport {
	rep := &runReport{Version: 1, Command: argv, CommandStatus: status, Failures: []string{},
		StartedAt: started.UTC(), DurationMs: time.Since(started).Milliseconds()}
	if cmdErr != nil {
		rep.CommandError = cmdErr.Error()
		rep.Failures = append(rep.Failures, cmdErr.Error())
	} else if status != 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("the command exited with status %d", status))
	}
	for _, res := range results {
		cr := res.report(r)
		rep.Totals.add(cr.counts)
		if res.serveErr != nil {
			rep.Failures = append(rep.Failures, fmt.Sprintf("cassette %s: %v", cr.Name, res.serveErr))
		}
		rep.Cassettes = append(rep.Cassettes, cr)
	}
	if n := rep.Totals.Missed; n > 0 && !r.allowMisses {
		rep.Failures = append(rep.Failures, missed(n, false).Error())
	}
	if n := rep.Totals.Unused; n > 0 && rf.failOnUnused {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d recorded requests were used by no client (--fail-on-unused)", n))
	}
	switch {
	case status != 0:
		rep.ExitStatus = status
	case len(rep.Failures) > 0:
		rep.ExitStatus = 1
	}
	return rep
}

// report is the part of the report about one cassette.
func (res *runResult) report(r *replayFlags) cassetteReport {
	t := res.target
	cr := cassetteReport{Name: t.name, Path: t.path, Mode: string(t.plan.Mode), URL: t.url,
		Misses: []missReport{}, UnusedInteractions: []interactionReport{}, Faults: []faultReport{}, Recorded: res.recorded}
	if t.suffix != "" {
		cr.Variable = "MCPMOCK_URL_" + t.suffix
	}
	if res.serveErr != nil {
		cr.Error = res.serveErr.Error()
	}
	s := res.stats
	cr.counts = counts{Sessions: s.Sessions, Messages: s.Messages, Matched: s.Matched, Missed: res.missed,
		Refused: max(0, s.Unmatched-res.missed), Unused: int64(s.Unused)}
	cr.Contract, cr.ContractWarnings = contractOf(t.rec)
	for _, m := range res.misses {
		cr.Misses = append(cr.Misses, missReport{Method: m.Method, Tool: m.Tool, Message: m.Message(), Explanation: m.Report(),
			Recorded: m.Recorded, Exhausted: m.Exhausted, Hint: m.Hint, Candidates: m.Candidates})
	}
	cr.MissesNotKept = res.missed - int64(len(res.misses))
	for _, i := range res.unused {
		method, tool := interactionOf(t.cas, i)
		cr.UnusedInteractions = append(cr.UnusedInteractions, interactionReport{Interaction: i, Method: method, Tool: tool})
	}
	for _, sc := range res.scripts {
		cr.Faults = append(cr.Faults, faultReport{Source: scriptSource(sc, &r.f), Method: sc.Method, Tool: sc.Tool, Fired: sc.Fired})
		if sc.Fired > 0 {
			cr.FaultsFired++
		} else {
			cr.FaultsNeverFired++
		}
	}
	return cr
}

// interactionOf is the method and tool of the recorded request at the 1-based
// position i of c.
func interactionOf(c *cassettes.Cassette, i int) (method, tool string) {
	if c == nil || i < 1 || i > len(c.Interactions) {
		return "", ""
	}
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(c.Interactions[i-1].Request, &req)
	return req.Method, matcher.Request{Method: req.Method, Params: req.Params}.Tool()
}

// scriptSource names a scripted interaction as the user wrote it: the
// --fault shortcut (faultFlags.apply makes them the first overlay), the
// overlay file and interaction, or the cassette's own interaction.
func scriptSource(sc replayer.Script, f *faultFlags) string {
	k := sc.Overlay
	if k == 0 {
		return fmt.Sprintf("cassette interaction %d", sc.Interaction)
	}
	if len(f.faults) > 0 {
		if k == 1 && sc.Interaction <= len(f.faults) {
			return "--fault " + shellQuote(f.faults[sc.Interaction-1])
		}
		k--
	}
	if k >= 1 && k <= len(f.overlays) {
		return fmt.Sprintf("overlay %s interaction %d", f.overlays[k-1], sc.Interaction)
	}
	return fmt.Sprintf("overlay %d interaction %d", sc.Overlay, sc.Interaction)
}

// print writes the summary of the run to log: each miss, the unused
// requests and the faults per cassette, then one line for the run.
func (rep *runReport) print(log *slog.Logger) {
	for _, cr := range rep.Cassettes {
		for i, m := range cr.Misses {
			log.Warn(fmt.Sprintf("run: %s: miss %d: %s", cr.Name, i+1, strings.TrimPrefix(m.Message, "mcpmock: ")))
		}
		if cr.MissesNotKept > 0 {
			log.Warn(fmt.Sprintf("run: %s: and %d more misses (the first %d are kept)", cr.Name, cr.MissesNotKept, maxMisses))
		}
		if len(cr.UnusedInteractions) > 0 {
			var parts []string
			for _, u := range cr.UnusedInteractions {
				parts = append(parts, fmt.Sprintf("#%d %s", u.Interaction, strings.TrimSpace(u.Method+" "+u.Tool)))
			}
			log.Info(fmt.Sprintf("run: %s: unused: %s", cr.Name, strings.Join(parts, ", ")))
		}
		for _, f := range cr.Faults {
			what := strings.TrimSpace(f.Method + " " + f.Tool)
			if f.Fired == 0 {
				log.Warn(fmt.Sprintf("run: %s: %s (%s) never fired", cr.Name, f.Source, what))
			} else {
				log.Info(fmt.Sprintf("run: %s: %s (%s) fired %d times", cr.Name, f.Source, what, f.Fired))
			}
		}
	}
	t := rep.Totals
	line := fmt.Sprintf("run: %d cassettes, %d sessions, %d matched, %d missed, %d refused by the protocol, %d unused, %d faults fired, %d never fired; the command exited with status %d",
		len(rep.Cassettes), t.Sessions, t.Matched, t.Missed, t.Refused, t.Unused, t.FaultsFired, t.FaultsNeverFired, rep.CommandStatus)
	if rep.ExitStatus == 0 {
		log.Info(line + ": ok")
		return
	}
	log.Warn(fmt.Sprintf("%s: exit status %d: %s", line, rep.ExitStatus, strings.Join(rep.Failures, "; ")))
}

// err is the run's end for main: nil, or its exit status.
func (rep *runReport) err() error {
	if rep.ExitStatus == 0 {
		return nil
	}
	return exitStatus(rep.ExitStatus)
}

// write writes the JSON report to path and the JUnit report to junit,
// each when named.
func (rep *runReport) write(path, junit string) error {
	var errs []error
	if path != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = writeFileAtomic(path, append(b, '\n'))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--report: %w", err))
		}
	}
	if junit != "" {
		b, err := xml.MarshalIndent(rep.junit(), "", "  ")
		if err == nil {
			err = writeFileAtomic(junit, append([]byte(xml.Header), append(b, '\n')...))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--junit: %w", err))
		}
	}
	return errors.Join(errs...)
}

// writeFileAtomic writes b to path by a rename, so that a CI step never
// reads half a report.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// The JUnit XML format as CI systems read it (Jenkins, GitLab, GitHub
// actions that publish test results): testsuites, a testsuite per
// cassette, a testcase per cassette and per miss, a failure element in a
// failed one, skipped in an allowed miss.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

func (rep *runReport) junit() junitSuites {
	secs := fmt.Sprintf("%.3f", float64(rep.DurationMs)/1000)
	out := junitSuites{Name: "mcpmock run", Time: secs}
	missesFail := false
	for _, f := range rep.Failures {
		missesFail = missesFail || strings.Contains(f, "matched nothing")
	}
	unusedFail := false
	for _, f := range rep.Failures {
		unusedFail = unusedFail || strings.Contains(f, "--fail-on-unused")
	}
	for _, cr := range rep.Cassettes {
		class := "mcpmock." + cr.Name
		s := junitSuite{Name: "mcpmock " + cr.Name, Time: secs, Timestamp: rep.StartedAt.Format("2006-01-02T15:04:05")}
		var out1 strings.Builder
		fmt.Fprintf(&out1, "%s (%s), mode %s, %s: %d sessions, %d messages, %d matched, %d missed, %d refused by the protocol, %d unused\n",
			cr.Name, cr.Path, cr.Mode, cr.URL, cr.Sessions, cr.Messages, cr.Matched, cr.Missed, cr.Refused, cr.Unused)
		for _, u := range cr.UnusedInteractions {
			fmt.Fprintf(&out1, "unused: interaction %d %s\n", u.Interaction, strings.TrimSpace(u.Method+" "+u.Tool))
		}
		for _, f := range cr.Faults {
			fmt.Fprintf(&out1, "fault %s (%s): fired %d times\n", f.Source, strings.TrimSpace(f.Method+" "+f.Tool), f.Fired)
		}
		if cr.Recorded != "" {
			fmt.Fprintln(&out1, cr.Recorded)
		}
		c := junitCase{Name: "cassette " + cr.Name, Classname: class, Time: secs, SystemOut: &junitText{out1.String()}}
		var why []string
		if cr.Error != "" {
			why = append(why, cr.Error)
		}
		if cr.Missed > 0 && missesFail {
			why = append(why, fmt.Sprintf("%d requests matched nothing in the cassette", cr.Missed))
		}
		if cr.Unused > 0 && unusedFail {
			why = append(why, fmt.Sprintf("%d recorded requests were used by no client", cr.Unused))
		}
		if len(why) > 0 {
			c.Failure = &junitFailure{Message: strings.Join(why, "; "), Type: "mcpmock", Text: out1.String()}
		}
		s.Cases = append(s.Cases, c)
		for i, m := range cr.Misses {
			mc := junitCase{Name: fmt.Sprintf("miss %d: %s", i+1, strings.TrimSpace(m.Method+" "+m.Tool)), Classname: class, Time: "0.000"}
			f := &junitFailure{Message: m.Message, Type: "miss", Text: m.Explanation}
			if missesFail {
				mc.Failure = f
			} else {
				f.Message = "--allow-misses: " + f.Message
				mc.Skipped = f
			}
			s.Cases = append(s.Cases, mc)
		}
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Skipped != nil {
				s.Skipped++
			}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	return out
}

// writeRecordReport writes the report of mcpmock record to path, when
// named: the one cassette in mode record with the recorder's summary, the
// recorded server's status as commandStatus, and the exit status of err
// (what endRecording returned). It returns err, or the error of writing.
func writeRecordReport(path, cassette string, rec *recorder.Recorder, status int, err error, started time.Time) error {
	if path == "" {
		return err
	}
	name := strings.TrimSuffix(filepath.Base(cassette), filepath.Ext(cassette))
	cr := cassetteReport{Name: name, Path: cassette, Mode: string(cassettes.ModeRecord), Recorded: rec.Summary(),
		Misses: []missReport{}, UnusedInteractions: []interactionReport{}, Faults: []faultReport{}}
	cr.Contract, cr.ContractWarnings = contractOf(rec)
	rep := &runReport{Version: 1, CommandStatus: status, Failures: []string{}, StartedAt: started.UTC(), DurationMs: time.Since(started).Milliseconds(),
		Cassettes: []cassetteReport{cr}}
	rep.Totals.ContractWarnings = cr.ContractWarnings
	if err != nil {
		rep.ExitStatus = exitCode(err, io.Discard)
		rep.Failures = append(rep.Failures, err.Error())
		if _, ok := err.(exitStatus); !ok {
			rep.Cassettes[0].Error = err.Error()
		}
	}
	if werr := rep.write(path, ""); werr != nil && err == nil {
		return werr
	}
	return err
}
