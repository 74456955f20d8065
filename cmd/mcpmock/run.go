package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
)

// This file is mcpmock run: every cassette served on a loopback URL (and to
// stdio clients through the bridge of run_bridge.go) while a test command
// runs, then one summary and the command's status, failed by misses
// (run_report.go). Each cassette is served by what replay and record use:
// the same flags, engine and listener.

// runFlags are the flags of run beyond those of replay.
type runFlags struct {
	cassettes    []string // -c [NAME=]PATH, repeatable
	upstreams    []string // --upstream [NAME=]URL, repeatable
	servers      []string // --server [NAME=]COMMAND, repeatable
	junit        string
	failOnUnused bool
}

// runTarget is one cassette of a run and what serves it.
type runTarget struct {
	name   string // NAME, given or from the file name
	suffix string // of the variables: MCPMOCK_URL_<suffix>
	path   string
	plan   cassettes.Plan
	live   []string // the live server's command, for --server
	url    string   // the live server's URL, for --upstream
}

// arrayValue is a repeatable string flag, for the flags that run takes once
// per cassette where replay takes them once.
type arrayValue struct{ values *[]string }

func (a arrayValue) Set(s string) error { *a.values = append(*a.values, s); return nil }
func (a arrayValue) Type() string       { return "stringArray" }
func (a arrayValue) String() string     { return "[" + strings.Join(*a.values, ",") + "]" }

// repeatable makes the flag name of fs (registered by replay's flags as a
// single string) a repeatable one that appends to values.
func repeatable(fs *pflag.FlagSet, name string, values *[]string, usage string) {
	f := fs.Lookup(name)
	f.Value, f.DefValue, f.Usage = arrayValue{values}, "", usage
}

const runSynopsis = "mcpmock run -c [NAME=]CASSETTE... [flags] -- COMMAND [ARG...]"

func (e *env) runCommand(ctx context.Context, args []string) error {
	var c common
	var r replayFlags
	var rf runFlags
	fs := newFlagSet("run", runSynopsis, e.stdout)
	c.register(fs)
	r.register(fs)
	repeatable(fs, "cassette", &rf.cassettes, "a cassette to serve, `[NAME=]PATH` (repeatable): its URL is in MCPMOCK_URL_<NAME> (NAME: the file name without extension when not given), the first one's also in MCPMOCK_URL")
	repeatable(fs, "upstream", &rf.upstreams, "the live server of cassette NAME at `[NAME=]URL` (Streamable HTTP; repeatable; no NAME: the first cassette), for the modes that need one")
	fs.StringArrayVar(&rf.servers, "server", nil, "the live server of cassette NAME as a stdio `[NAME=]COMMAND` (split into words as a shell does, without expansion; repeatable; no NAME: the first cassette)")
	fs.StringVar(&rf.junit, "junit", "", "write a JUnit XML report to `FILE`: a test case per cassette and per miss")
	fs.BoolVar(&rf.failOnUnused, "fail-on-unused", false, "also fail (exit 1) when a recorded request was used by no client")
	// Each cassette gets a free loopback port.
	fs.MarkHidden("listen")
	fs.MarkHidden("allow-remote")
	fs.Lookup("mode").Usage = "replay, record (forward and write new cassettes), once (replay the cassettes that exist, record the others), new-episodes (replay, forward a miss and append it) or passthrough (forward, write nothing); the live servers are --upstream [NAME=]URL or --server [NAME=]COMMAND"
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if r.h.listen != "" {
		return usagef("run serves each cassette on a free loopback port; --listen is for replay")
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usagef("run needs the test command after --: %s", runSynopsis)
	}
	targets, err := rf.targets(&r.mf)
	if err != nil {
		return err
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	ui, err := c.startUI(ctx, e) // ui.go: --ui, the traffic of every cassette
	if err != nil {
		return err
	}
	if ui != nil {
		defer ui.close()
	}
	started := time.Now()
	served, err := e.serveTargets(ctx, &c, &r, targets, log, ui)
	if err != nil {
		return err
	}
	status, cmdErr := e.runTests(argv, served.environ(os.Environ()))
	results := served.stop(e, &c, &r)
	rep := newRunReport(argv, started, status, cmdErr, results, &r, &rf)
	rep.print(c.summaryLogger(e.stderr))
	if err := rep.write(r.report, rf.junit); err != nil {
		return err
	}
	return rep.err()
}

// validName is a NAME of -c NAME=PATH (and of --upstream, --server): a
// word, so that a path or URL holding "=" is not taken for one.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// cutName splits [NAME=]VALUE.
func cutName(s string) (name, value string) {
	if n, v, ok := strings.Cut(s, "="); ok && validName.MatchString(n) {
		return n, v
	}
	return "", s
}

// envSuffix is NAME as the end of a variable name (DESIGN.md, "Command
// line"): upper-cased, every character that is not a letter or a digit
// turned into "_".
func envSuffix(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// targets are the cassettes of the run with their names, live servers and
// plans (cassettes.Decide, per cassette: with --mode once, a missing
// cassette is recorded while the others replay).
func (rf *runFlags) targets(mf *modeFlags) ([]*runTarget, error) {
	if len(rf.cassettes) == 0 {
		return nil, usagef("run needs at least one -c [NAME=]CASSETTE")
	}
	mode, err := cassettes.ParseMode(mf.mode)
	if err != nil {
		return nil, usagef("--mode: %v", err)
	}
	var out []*runTarget
	byName := map[string]*runTarget{}
	bySuffix := map[string]*runTarget{}
	for _, spec := range rf.cassettes {
		name, path := cutName(spec)
		if path == "" {
			return nil, usagef("-c %q: no cassette path after the name", spec)
		}
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		t := &runTarget{name: name, suffix: envSuffix(name), path: path}
		if o := bySuffix[t.suffix]; o != nil {
			return nil, usagef("-c %s and -c %s both name MCPMOCK_URL_%s: give one of them another NAME (-c NAME=PATH)", o.path, path, t.suffix)
		}
		byName[name], bySuffix[t.suffix] = t, t
		out = append(out, t)
	}
	target := func(flag, spec string) (*runTarget, string, error) {
		name, value := cutName(spec)
		if name == "" {
			return out[0], value, nil
		}
		t := byName[name]
		if t == nil {
			return nil, "", usagef("%s %q: no cassette is named %q (name one with -c %s=PATH)", flag, spec, name, name)
		}
		return t, value, nil
	}
	for _, spec := range rf.upstreams {
		t, u, err := target("--upstream", spec)
		if err != nil {
			return nil, err
		}
		t.url = u
	}
	for _, spec := range rf.servers {
		t, cmd, err := target("--server", spec)
		if err != nil {
			return nil, err
		}
		if t.live, err = splitWords(cmd); err != nil || len(t.live) == 0 {
			return nil, usagef("--server %q: want a command line (%v)", spec, err)
		}
	}
	for _, t := range out {
		_, statErr := os.Stat(t.path)
		t.plan = cassettes.Decide(mode, statErr == nil)
		switch {
		case t.url != "" && t.live != nil:
			return nil, usagef("cassette %s: give its live server as --server or as --upstream, not both", t.name)
		case t.plan.Live && t.url == "" && t.live == nil:
			return nil, usagef("--mode %s needs the live server of cassette %s now: --upstream %s=URL or --server %s=COMMAND", mode, t.name, t.name, t.name)
		case t.plan.Replay && statErr != nil:
			return nil, fmt.Errorf("cassette %s: %w (record it with --mode once or --mode record and its live server)", t.name, statErr)
		}
	}
	return out, nil
}

// runTests runs the test command with env, its standard streams mcpmock's,
// forwarding SIGINT and SIGTERM to it, and returns its exit status (128 +
// the signal's number when a signal ended it, as a shell says).
func (e *env) runTests(argv, env []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	done := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case sig := <-e.signals:
				cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	<-forwarded
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exitStatusOf(ee.ProcessState), nil
	}
	return 0, err
}

// exitStatusOf is the status of an ended process as a shell reports it.
func exitStatusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// splitWords splits a command line into words as a POSIX shell does, with
// single and double quotes and backslashes, and without any expansion.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// shellQuote quotes a word for a POSIX shell, only when it needs it, so
// that splitWords (or shlex.split) gives it back.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// joinWords is argv as one command line for a shell (or splitWords).
func joinWords(argv []string) string {
	quoted := make([]string, len(argv))
	for i, w := range argv {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// jsonWords is argv as a JSON array of strings.
func jsonWords(argv []string) string {
	b, _ := json.Marshal(argv)
	return string(b)
}
