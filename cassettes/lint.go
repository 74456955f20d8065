package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Severity says whether a lint problem fails the check.
type Severity string

// The severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding of Lint, at a position of the file.
type Problem struct {
	Severity Severity
	// Interaction is the 0-based index of the interaction; -1 for the file
	// as a whole.
	Interaction  int
	Line, Column int
	Message      string
}

func (p Problem) String() string {
	if p.Line <= 0 { // the file as a whole: it cannot be read, say
		return fmt.Sprintf("%s: %s", p.Severity, p.Message)
	}
	return fmt.Sprintf("%s: line %d, column %d: %s", p.Severity, p.Line, p.Column, p.Message)
}

// LintOptions configure Lint. The zero value (or nil) is the default.
type LintOptions struct {
	// Redact are the rules whose secrets must not be in the file; nil means
	// DefaultRedactRules.
	Redact *RedactRules
	// MaxAge, when positive, is the oldest a recording may be (by
	// meta.recordedAt); an older one is a warning, or an error with
	// MaxAgeFail.
	MaxAge     time.Duration
	MaxAgeFail bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Lint checks a cassette file: that it parses (schema and version), then
// what parses but is likely a mistake: requests without responses,
// duplicate and unreachable interactions, lines that are not JSON-RPC,
// secrets that the redaction rules know (the values of secret-named members
// included, see SecretMember: cassettes of older versions may hold some in
// clear), and the recording's age. It returns
// the problems in file order and the cassette (nil when it does not parse).
// Matcher syntax is checked by package matcher (matcher.CheckCassette).
func Lint(name string, data []byte, opts *LintOptions) ([]Problem, *Cassette) {
	var o LintOptions
	if opts != nil {
		o = *opts
	}
	if o.Redact == nil {
		o.Redact = DefaultRedactRules()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c, err := parseAll(name, data)
	if err != nil {
		p := Problem{Severity: SeverityError, Interaction: -1, Line: 1, Column: 1, Message: err.Error()}
		var pe *PosError
		if errors.As(err, &pe) {
			p.Line, p.Column, p.Message = pe.Line, pe.Column, pe.Err.Error()
		}
		return []Problem{p}, nil
	}
	offsets := interactionOffsets(data)
	var out []Problem
	add := func(sev Severity, i int, format string, args ...any) {
		off := int64(0)
		if i >= 0 && i < len(offsets) {
			off = offsets[i]
		}
		line, col := Position(data, off)
		msg := fmt.Sprintf(format, args...)
		if i >= 0 {
			msg = fmt.Sprintf("interaction %d: %s", i+1, msg)
		}
		out = append(out, Problem{Severity: sev, Interaction: i, Line: line, Column: col, Message: msg})
	}
	if o.MaxAge > 0 {
		if age, ok := c.AgeAt(o.Now()); !ok {
			add(SeverityWarning, -1, "meta.recordedAt is missing or not an RFC 3339 time: the age of the recording is unknown")
		} else if age.Exceeds(o.MaxAge) {
			sev := SeverityWarning
			if o.MaxAgeFail {
				sev = SeverityError
			}
			add(sev, -1, "the recording is %s old (recorded %s), older than the maximum age %s: record it again or check it with mcpmock cassette verify",
				age, c.Meta.RecordedAt, o.MaxAge)
		}
	}
	for _, e := range c.echoes() {
		if e.first < 0 {
			add(SeverityWarning, e.interaction, "%s is not a JSON-RPC message (%q) but the data of an SSE priming event: replay does not send it; delete it", e.where(&c.Interactions[e.interaction]), e.text)
			continue
		}
		fix := "delete the one that is stale"
		if e.exact {
			fix = "the same message: loading the cassette drops it"
		}
		add(SeverityWarning, e.interaction, "a server message with SSE event id %q, which interaction %d recorded already in this session: the server sent it again on a resumed stream (%s)", e.eventID, e.first+1, fix)
	}
	seen := map[string]int{} // method and params, then response → first interaction
	always := map[string]int{}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		switch {
		case in.Raw != nil && !(in.From == FromServer && jsonrpc.NoMessage([]byte(*in.Raw))):
			add(SeverityWarning, i, "a line that is not JSON-RPC: replay sends it as it is")
		case in.Request != nil && in.From == FromClient && in.Response == nil && !in.Scripted():
			add(SeverityWarning, i, "request %s has no response: replay will not answer it", describeRequest(in.Request))
		}
		if in.Request == nil || in.From != FromClient || in.Scripted() {
			continue
		}
		key := requestKey(in.Request) + string(in.Match)
		if j, ok := always[key]; ok {
			add(SeverityError, i, "unreachable: interaction %d answers the same request %s always (\"times\": -1)", j+1, describeRequest(in.Request))
			continue
		}
		if in.Times < 0 {
			always[key] = i
		}
		full := key + "\x00" + responseKey(in.Response)
		if j, ok := seen[full]; ok {
			add(SeverityWarning, i, "duplicate of interaction %d: the same request %s with the same response", j+1, describeRequest(in.Request))
			continue
		}
		seen[full] = i
	}
	for _, s := range c.Secrets(o.Redact) {
		add(SeverityError, s.Interaction, "a secret at %s (%s): run mcpmock cassette redact", s.Where, s.Rule)
	}
	return out, c
}

// requestKey is a request without its id, members in recorded order.
func requestKey(raw json.RawMessage) string {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(raw, &m)
	var b bytes.Buffer
	json.Compact(&b, m.Params)
	return m.Method + " " + b.String()
}

func responseKey(r *Message) string {
	if r == nil {
		return ""
	}
	if r.Raw != nil {
		return *r.Raw
	}
	var m map[string]json.RawMessage
	json.Unmarshal(r.Message, &m)
	delete(m, "id")
	b, _ := json.Marshal(m)
	return string(b)
}

// describeRequest names a request for people: its method, and the tool of a
// tools/call.
func describeRequest(raw json.RawMessage) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(raw, &m)
	if m.Method == "tools/call" && m.Params.Name != "" {
		return m.Method + " " + m.Params.Name
	}
	return m.Method
}

// interactionOffsets returns the byte offset of each interaction of a
// cassette file, in order (see Position). It assumes data parses.
func interactionOffsets(data []byte) []int64 {
	var out []int64
	members(data, 0, func(key string, off int64, raw json.RawMessage) {
		if key == "interactions" {
			elements(raw, off, func(_ int, eoff int64, _ json.RawMessage) { out = append(out, eoff) })
		}
	})
	return out
}
