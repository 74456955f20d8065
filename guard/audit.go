package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// AuditRecord is one line of the audit log.
type AuditRecord struct {
	Time    time.Time       `json:"time"`
	Session string          `json:"session,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Tool    string          `json:"tool"`
	// Arguments are the call's arguments with secrets redacted.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Decision is one of the Decision constants.
	Decision string `json:"decision"`
	// By says who or what decided: "policy", "person", "no terminal",
	// "prompt", or the flag ("--deny-tools delete_*", "--call-timeout").
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Fingerprint is that of the tool's definition as the server lists it
	// now, and Pinned that of its definition in the pin file (--pin), in
	// the decisions about definitions and the calls the pin refused.
	Fingerprint string `json:"fingerprint,omitempty"`
	Pinned      string `json:"pinned,omitempty"`
}

// OpenAudit opens (or creates) an audit file for appending. Each record is
// written with one write to a file opened with O_APPEND, so a crash never
// truncates the lines already written.
func OpenAudit(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	return f, nil
}

// event is a call being decided about.
type event struct {
	Session string
	ID      jsonrpc.ID
	Tool    string
	args    json.RawMessage
	raw     []byte // the request as the client sent it
	// fingerprint and pinned are the tool's current and pinned
	// fingerprints, for the pin's decisions.
	fingerprint, pinned string
}

type auditor struct {
	mu    sync.Mutex // guards w
	w     io.Writer
	rules *cassettes.RedactRules
	now   func() time.Time
}

func newAuditor(w io.Writer, rules *cassettes.RedactRules, now func() time.Time) (*auditor, error) {
	if w == nil {
		return nil, nil
	}
	if err := rules.Check(); err != nil {
		return nil, fmt.Errorf("audit redaction: %w", err)
	}
	return &auditor{w: w, rules: rules, now: now}, nil
}

// redact returns the arguments with the secrets that the rules find
// replaced. The arguments are redacted as a message of their own, so that
// paths as "params.arguments.token" apply.
func (a *auditor) redact(ev event) json.RawMessage {
	msg := notification("tools/call", map[string]any{"name": ev.Tool, "arguments": ev.args})
	c := &cassettes.Cassette{Interactions: []cassettes.Interaction{{From: cassettes.FromServer, Notification: msg}}}
	// A Redactor caches by message address; a fresh one per call never
	// mistakes one call's arguments for another's.
	c.Redact(a.rules)
	var p struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(c.Interactions[0].Notification, &p) != nil {
		return nil
	}
	return p.Params.Arguments
}

func (a *auditor) write(ev event, decision, by, reason string) {
	if a == nil {
		return
	}
	rec := AuditRecord{Time: a.now().UTC(), Session: ev.Session, Tool: ev.Tool, Decision: decision, By: by, Reason: reason, Fingerprint: ev.fingerprint, Pinned: ev.pinned}
	if ev.args != nil {
		rec.Arguments = a.redact(ev)
	}
	if !ev.ID.IsZero() {
		rec.ID = json.RawMessage(ev.ID)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w.Write(append(line, '\n')) // one write per line
}

// decide logs a decision and writes it to the audit log.
func (g *Guard) decide(ev event, decision, by, reason string) {
	level := slog.LevelInfo
	if decision != DecisionAllow {
		level = slog.LevelWarn
	}
	line := fmt.Sprintf("⚑ tools/call %s %s → %s (%s)", ev.Tool, short(ev.args, 120), decision, by)
	if reason != "" {
		line += ": " + reason
	}
	g.log.Log(context.Background(), level, line, slog.String("tool", ev.Tool), slog.String("guard", decision), slog.String("by", by))
	g.audit.write(ev, decision, by, reason)
}
