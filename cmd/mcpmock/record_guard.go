package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/guard"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/recorder"
)

// guardFlags are the flags of record that make the tap a guard between the
// client and the server (package guard). Any of them turns the guard on.
type guardFlags struct {
	on             bool
	allow, deny    []string
	confirm        []string
	confirmTimeout time.Duration
	trustServer    bool
	callTimeout    time.Duration
	rateLimits     []string
	maxResultBytes int
	contentTypes   []string
	noOutputSchema bool
	auditFile      string
	pin            string
	pinUpdate      bool

	fs *pflag.FlagSet
}

func (f *guardFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.BoolVar(&f.on, "guard", false, "guard the tap: log the exposed tools and every call, check results against outputSchema (implied by the other guard flags)")
	fs.StringSliceVar(&f.allow, "allow-tools", nil, "only these tools (comma-separated globs, repeatable) are listed and callable")
	fs.StringSliceVar(&f.deny, "deny-tools", nil, "hide these tools (globs) from tools/list and refuse calls to them with -32602")
	fs.StringSliceVar(&f.confirm, "confirm", nil, "ask on the terminal (/dev/tty) before calling these tools (globs, or \"destructive\"), and about their changed --pin definitions (\"pin\": about every changed definition, no call); no terminal denies")
	fs.DurationVar(&f.confirmTimeout, "confirm-timeout", 2*time.Minute, "deny a call that --confirm holds when no one answers within `DURATION` (0: wait as long as the client does)")
	fs.BoolVar(&f.trustServer, "trust-server", false, "trust the server's tool annotations (readOnlyHint, destructiveHint...) for --confirm destructive")
	fs.DurationVar(&f.callTimeout, "call-timeout", 0, "answer a tools/call the server has not answered within `DURATION` with a tool error, and cancel it upstream")
	fs.StringArrayVar(&f.rateLimits, "tool-rate-limit", nil, "at most N calls per DURATION of the tools matching the glob: `TOOL=N/DURATION` (get_weather=5/1m; repeatable)")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 0, "withhold tools/call results larger than `N` bytes (a tool error says why)")
	fs.StringSliceVar(&f.contentTypes, "result-content-types", nil, "withhold results with content of other types (text,image,audio,resource,resource_link)")
	fs.BoolVar(&f.noOutputSchema, "no-output-schema-check", false, "do not check results against the tool's outputSchema")
	fs.StringVar(&f.auditFile, "audit-file", "", "append one JSON line per guard decision to `PATH`")
	fs.StringVar(&f.pin, "pin", "", "pin the server's tool definitions in `FILE` (one per server): written when absent; when present, hide changed or new tools and refuse their calls")
	fs.BoolVar(&f.pinUpdate, "pin-update", false, "accept the server's current tool definitions: rewrite the --pin file from its tools/list")
}

// enabled reports whether a guard flag was given.
func (f *guardFlags) enabled() bool {
	if f.fs == nil {
		return false
	}
	for _, name := range []string{"guard", "allow-tools", "deny-tools", "confirm", "confirm-timeout", "trust-server", "call-timeout", "tool-rate-limit", "max-result-bytes", "result-content-types", "no-output-schema-check", "audit-file", "pin", "pin-update"} {
		if f.fs.Changed(name) {
			return true
		}
	}
	return false
}

// apply builds the guard and puts it on the tap, whichever transports its
// sides speak (the stdio tap, the HTTP tap, both bridges); the returned
// function closes the audit file and the terminal.
func (f *guardFlags) apply(so *recorder.StdioOptions, h *recordHTTPFlags, stderr io.Writer, log *slog.Logger) (func(), error) {
	if !f.enabled() {
		return func() {}, nil
	}
	o := &guard.Options{
		Allow: f.allow, Deny: f.deny, Confirm: f.confirm, ConfirmTimeout: f.confirmTimeout, TrustServer: f.trustServer,
		CallTimeout: f.callTimeout, MaxResultBytes: f.maxResultBytes, ContentTypes: f.contentTypes,
		NoOutputSchema: f.noOutputSchema, Logger: log,
	}
	if f.pinUpdate && f.pin == "" {
		return nil, usagef("--pin-update needs --pin FILE")
	}
	if f.pin != "" {
		o.PinFile, o.PinUpdate = f.pin, f.pinUpdate
		if h.upstream != "" {
			o.PinSource = cassettes.RedactURL(h.upstream)
		} else {
			argv, _ := cassettes.RedactArgs(f.fs.Args())
			o.PinSource = strings.Join(argv, " ")
		}
	}
	for _, s := range f.rateLimits {
		rl, err := guard.ParseRateLimit(s)
		if err != nil {
			return nil, usagef("--tool-rate-limit: %v", err)
		}
		o.RateLimits = append(o.RateLimits, rl)
	}
	var closers []io.Closer
	done := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	if f.auditFile != "" {
		af, err := guard.OpenAudit(f.auditFile)
		if err != nil {
			return nil, err
		}
		closers = append(closers, af)
		o.Audit = af
	}
	if len(f.confirm) > 0 {
		// stdin and stdout carry the protocol: ask on the terminal.
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			log.Warn(fmt.Sprintf("guard: no terminal to ask on (%v): calls that --confirm %v matches will be denied", err, f.confirm))
		} else {
			closers = append(closers, tty)
			term := guard.NewTerminal(tty)
			if p, ok := stderr.(*livelog.Gate); ok {
				term.Pause = p // the live log waits while a question is open
			}
			o.Prompter = term
		}
	}
	g, err := guard.New(o)
	var pe *fs.PathError
	if errors.Is(err, guard.ErrPinFile) || errors.As(err, &pe) {
		done()
		return nil, err // trouble with a file: exit status 1
	}
	if err != nil {
		done()
		return nil, usagef("%v", err)
	}
	so.Guard = g
	h.guard = g
	return done, nil
}
