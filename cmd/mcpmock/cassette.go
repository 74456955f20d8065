package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/replayer"
)

func (e *env) cassette(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("cassette needs a subcommand: lint, show, redact, verify, diff or import")
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, cassetteUsage)
		return nil
	case "lint":
		return e.cassetteLint(args[1:])
	case "show":
		return e.cassetteShow(args[1:])
	case "redact":
		return e.cassetteRedact(args[1:])
	case "verify":
		return e.cassetteVerify(ctx, args[1:])
	case "diff":
		return e.cassetteDiff(args[1:])
	case "import":
		return e.cassetteImport(args[1:])
	}
	return usagef("unknown cassette subcommand %q (want lint, show, redact, verify, diff or import)", args[0])
}

const cassetteUsage = `mcpmock cassette works on cassette files.

Usage:
  mcpmock cassette lint [flags] CASSETTE...                check cassettes (exit 1 on an error)
  mcpmock cassette show [flags] CASSETTE                   print a cassette as a timeline
  mcpmock cassette redact -c CASSETTE [flags]              apply redaction rules to a cassette in place
  mcpmock cassette verify -c CASSETTE [flags] -- COMMAND   the drift check against the live server (or --upstream URL)
  mcpmock cassette diff [--json] [--breaking] A B          what changed between two cassettes (exit 1 if anything did)
  mcpmock cassette import --from FORMAT FILE -c CASSETTE   a cassette from a HAR, a line log or an mcpsnoop trace

Run 'mcpmock cassette SUBCOMMAND --help' for the flags and examples of one.
`

// cassetteLint is "mcpmock cassette lint": every problem on stderr as
// "SEVERITY: FILE: line L, column C: MESSAGE"; an error fails the command.
func (e *env) cassetteLint(args []string) error {
	var maxAge time.Duration
	var maxAgeFail bool
	var rf redactFlags
	fs := newFlagSet("cassette lint", "mcpmock cassette lint [flags] CASSETTE...", e.stdout)
	fs.DurationVar(&maxAge, "max-age", 0, "warn about a recording older than `DURATION` (by meta.recordedAt; e.g. 720h)")
	fs.BoolVar(&maxAgeFail, "max-age-fail", false, "make a recording older than --max-age an error")
	rf.register(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("cassette lint needs a cassette file")
	}
	rules, err := rf.rules()
	if err != nil {
		return err
	}
	failed := 0
	for _, path := range fs.Args() {
		problems, c := lintCassette(path, &cassettes.LintOptions{Redact: rules, MaxAge: maxAge, MaxAgeFail: maxAgeFail})
		errs, warns := 0, 0
		for _, p := range problems {
			if p.Line > 0 {
				fmt.Fprintf(e.stderr, "%s: %s: line %d, column %d: %s\n", p.Severity, path, p.Line, p.Column, p.Message)
			} else { // the file as a whole (it cannot be read): no place in it
				fmt.Fprintf(e.stderr, "%s: %s: %s\n", p.Severity, path, p.Message)
			}
			if p.Severity == cassettes.SeverityError {
				errs++
			} else {
				warns++
			}
		}
		switch {
		case errs > 0:
			failed++
		case c != nil:
			fmt.Fprintf(e.stdout, "%s: ok (%d interactions, %d warnings)\n", path, len(c.Interactions), warns)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cassettes have errors", failed, fs.NArg())
	}
	return nil
}

// lintCassette lints a cassette file: cassettes.Lint, the matcher
// configurations with their positions, and what replay checks when it
// prepares the cassette.
func lintCassette(path string, opts *cassettes.LintOptions) ([]cassettes.Problem, *cassettes.Cassette) {
	data, err := cassettes.ReadFile(path)
	if err != nil {
		// The line names the file already.
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("load cassette %q: ", path))
		return []cassettes.Problem{{Severity: cassettes.SeverityError, Interaction: -1, Message: msg}}, nil
	}
	problems, c := cassettes.Lint(path, data, opts)
	if c == nil {
		return problems, nil
	}
	extra := func(err error) {
		p := cassettes.Problem{Severity: cassettes.SeverityError, Interaction: -1, Message: err.Error()}
		var pe *cassettes.PosError
		if errors.As(err, &pe) {
			p.Line, p.Column, p.Message = pe.Line, pe.Column, pe.Err.Error()
		}
		problems = append(problems, p)
	}
	if err := matcher.CheckCassette(path, data); err != nil {
		extra(err)
	} else if _, err := replayer.New(c, nil); err != nil {
		extra(err)
	}
	return problems, c
}

// cassetteShow is "mcpmock cassette show".
func (e *env) cassetteShow(args []string) error {
	var color string
	var o showOptions
	fs := newFlagSet("cassette show", "mcpmock cassette show [flags] CASSETTE", e.stdout)
	fs.StringVar(&color, "color", "auto", "colour: auto (on a terminal, unless NO_COLOR is set), always or never")
	fs.BoolVar(&o.full, "full", false, "print each message whole (its JSON on one line) under its line")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("cassette show needs one cassette file")
	}
	switch color {
	case "auto":
		o.color = isTerminal(e.stdout)
	case "always":
		o.color = true
	case "never":
	default:
		return usagef("--color must be auto, always or never, not %q", color)
	}
	c, err := cassettes.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	return showTimeline(e.stdout, c, o)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
