package replayer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// Miss describes a request that matched nothing.
type Miss struct {
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Exhausted reports that matching interactions exist but were all used
	// up (strict mode or "times").
	Exhausted bool `json:"exhausted,omitempty"`
	// Recorded reports whether the method occurs in the cassette at all.
	Recorded bool `json:"recorded"`
	// Candidates are the closest recorded requests of the same method,
	// closest first. What they show of both requests is redacted by the
	// default rules (shown.go).
	Candidates []Candidate `json:"candidates,omitempty"`
	// Hint says what would make the request match, when one change would.
	Hint string `json:"hint,omitempty"`

	// live and id are the missed request, kept until settle explains the
	// miss (pending); then live is dropped (explain.go).
	live    matcher.Request
	id      jsonrpc.ID
	pending bool
}

// Candidate is a recorded request close to a missed one.
type Candidate struct {
	// Interaction is the 1-based position in the cassette.
	Interaction int                  `json:"interaction"`
	Tool        string               `json:"tool,omitempty"`
	Differences []string             `json:"differences"`
	Diff        string               `json:"diff,omitempty"`
	diffs       []matcher.Difference `json:"-"`
	pos         int                  // position in Engine.requests
}

func (m *Miss) Error() string { return m.Message() }

// Unwrap makes errors.Is(miss, ErrNoMatch) true.
func (m *Miss) Unwrap() error { return ErrNoMatch }

// Message is the one-paragraph explanation of the miss.
func (m *Miss) Message() string {
	what := m.Method
	if m.Tool != "" {
		what = fmt.Sprintf("%s of tool %q", m.Method, m.Tool)
	}
	switch {
	case !m.Recorded:
		return fmt.Sprintf("mcpmock: method %q was never recorded in this cassette", m.Method)
	case m.Exhausted:
		return fmt.Sprintf("mcpmock: every recorded %s that matches was already used", what)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "mcpmock: no recorded %s matches", what)
	if len(m.Candidates) > 0 {
		c := m.Candidates[0]
		fmt.Fprintf(&sb, "; closest is interaction %d: %s", c.Interaction, strings.Join(c.Differences, "; "))
	}
	if m.Hint != "" {
		sb.WriteString(" (" + m.Hint + ")")
	}
	return sb.String()
}

// Report is the long explanation: the message, then each candidate's diff.
func (m *Miss) Report() string {
	var sb strings.Builder
	sb.WriteString(m.Message())
	for _, c := range m.Candidates {
		if c.Diff != "" {
			fmt.Fprintf(&sb, "\ninteraction %d (-recorded +live):\n%s", c.Interaction, strings.TrimRight(c.Diff, "\n"))
		}
	}
	return sb.String()
}

// RPCError is the JSON-RPC error that answers the missed request.
func (m *Miss) rpcError() *jsonrpc.Error {
	code := CodeNoMatch
	if !m.Recorded {
		code = jsonrpc.CodeMethodNotFound
	}
	data, _ := json.Marshal(m)
	return &jsonrpc.Error{Code: code, Message: m.Message(), Data: data}
}
