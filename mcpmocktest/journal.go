package mcpmocktest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/replayer"
)

// Call is one request that a client made, as the server saw it: an entry of
// the server's journal.
type Call struct {
	// Method is the JSON-RPC method ("tools/call", "tools/list"...).
	Method string `json:"method"`
	// Tool is the tool name of a tools/call.
	Tool string `json:"tool,omitempty"`
	// Arguments are the arguments of a tools/call, or the params of another
	// method, as sent.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Interaction is the 1-based position in the cassette of the recorded
	// interaction that answered; 0 when a stub answered, when the answer
	// was made up (ping, an initialize from a recorded server/discover), or
	// when nothing matched.
	Interaction int `json:"interaction,omitempty"`
	// Missed reports a request that matched nothing.
	Missed bool `json:"missed,omitempty"`

	// Whether the missed method occurs in the cassette, and for calls
	// journaled by a Command process the miss's report.
	recorded bool
	report   string
}

func callOf(method, tool string, args, params []byte, interaction int, miss *replayer.Miss) Call {
	c := Call{Method: method, Tool: tool, Interaction: interaction, Missed: miss != nil}
	if method == "tools/call" {
		c.Arguments = cloneRaw(args)
	} else {
		c.Arguments = cloneRaw(params)
	}
	if miss != nil {
		c.recorded = miss.Recorded
	}
	return c
}

func cloneRaw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// String renders the call as get_weather {"location":"Paris"}.
func (c Call) String() string {
	if c.Method == "tools/call" {
		return fmt.Sprintf("%s %s", c.Tool, compact(c.Arguments))
	}
	return fmt.Sprintf("%s %s", c.Method, compact(c.Arguments))
}

func compact(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	out, err := compactJSON(b)
	if err != nil {
		return string(b)
	}
	return string(out)
}

// describe renders a recorded request for a message.
func describe(request json.RawMessage) string {
	m, err := jsonrpc.Parse(request)
	if err != nil {
		return string(request)
	}
	r := matcher.Request{Method: m.Method, Params: m.Params}
	if tool := r.Tool(); tool != "" {
		args, _ := jsonrpc.Member(m.Params, "arguments")
		return fmt.Sprintf("tools/call %s %s", tool, compact(args))
	}
	return m.Method
}

// Requests returns every request the clients made, in the order the server
// handled them: the handshake, lists, tool calls. Sessions of Command
// processes come after the in-process ones, each process in the order it
// started. In record mode the journal is read from what was recorded so far.
func (s *Server) Requests() []Call {
	if forwards(s.mode) {
		return s.recordedCalls()
	}
	s.mu.Lock()
	calls := append([]Call(nil), s.calls...)
	s.mu.Unlock()
	return append(calls, s.childEvents().calls...)
}

// Calls returns the tools/call requests of the journal, in order.
func (s *Server) Calls() []Call {
	var out []Call
	for _, c := range s.Requests() {
		if c.Method == "tools/call" {
			out = append(out, c)
		}
	}
	return out
}

// CallCount returns how many times the clients called the tool.
func (s *Server) CallCount(tool string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Tool == tool {
			n++
		}
	}
	return n
}

// CallCounts returns the number of calls of each tool called.
func (s *Server) CallCounts() map[string]int {
	m := map[string]int{}
	for _, c := range s.Calls() {
		m[c.Tool]++
	}
	return m
}

// ToolCall is an expected tool call for AssertCalls: a tool and its
// arguments (anything encoding/json encodes, or JSON text in a string; nil
// for none).
type ToolCall struct {
	Tool      string
	Arguments any
}

// AssertCalled fails the test unless the tool was called with arguments
// equal to args as JSON values (key order ignored, numbers as numbers).
// The failure shows the calls of that tool made, and the difference from
// the closest (-want +got).
func (s *Server) AssertCalled(t testing.TB, tool string, args any) {
	t.Helper()
	want, err := decode(args)
	if err != nil {
		t.Fatalf("mcpmocktest: AssertCalled(%q): %v", tool, err)
	}
	var (
		seen    []string
		best    string
		bestLen = -1
	)
	for _, c := range s.Calls() {
		if c.Tool != tool {
			continue
		}
		got, _ := decode(c.Arguments)
		if cmp.Equal(want, got) {
			return
		}
		diff := cmp.Diff(matcher.Plain(want), matcher.Plain(got))
		seen = append(seen, "\t"+c.String())
		if n := strings.Count(diff, "\n"); bestLen < 0 || n < bestLen {
			best, bestLen = diff, n
		}
	}
	wantJSON, _ := toJSON(args)
	if len(seen) == 0 {
		t.Errorf("%s was never called (want arguments %s); tools called: %v", tool, wantJSON, s.CallCounts())
		return
	}
	t.Errorf("%s was not called with %s; its calls:\n%s\nclosest call (-want +got):\n%s", tool, wantJSON, strings.Join(seen, "\n"), best)
}

// AssertNotCalled fails the test if the tool was called.
func (s *Server) AssertNotCalled(t testing.TB, tool string) {
	t.Helper()
	var seen []string
	for _, c := range s.Calls() {
		if c.Tool == tool {
			seen = append(seen, "\t"+c.String())
		}
	}
	if len(seen) > 0 {
		t.Errorf("%s was called %d times, want none:\n%s", tool, len(seen), strings.Join(seen, "\n"))
	}
}

// AssertCalls fails the test unless the tool calls made are exactly want, in
// order, showing the difference (-want +got).
func (s *Server) AssertCalls(t testing.TB, want ...ToolCall) {
	t.Helper()
	var w, g []ToolCall // the arguments decoded
	for _, c := range want {
		args, err := decode(c.Arguments)
		if err != nil {
			t.Fatalf("mcpmocktest: AssertCalls: %s: %v", c.Tool, err)
		}
		w = append(w, ToolCall{c.Tool, args})
	}
	for _, c := range s.Calls() {
		args, _ := decode(c.Arguments)
		g = append(g, ToolCall{c.Tool, args})
	}
	if !cmp.Equal(w, g) {
		t.Errorf("tool calls (-want +got):\n%s", cmp.Diff(plainCalls(w), plainCalls(g)))
	}
}

// plainCalls returns calls with their decoded arguments made plain to be
// shown (matcher.Plain).
func plainCalls(calls []ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{c.Tool, matcher.Plain(c.Arguments)}
	}
	return out
}

// decode turns v into a JSON tree (numbers as json.Number) for comparison.
func decode(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok && len(raw) == 0 {
		return nil, nil
	}
	b, err := toJSON(v)
	if err != nil {
		return nil, err
	}
	tree, ok := matcher.Decode(b)
	if !ok {
		return nil, fmt.Errorf("not JSON: %s", b)
	}
	return tree, nil
}

// recordedCalls is the journal of record mode: the client requests
// recorded so far.
func (s *Server) recordedCalls() []Call {
	s.mu.Lock()
	recs := append([]*recording(nil), s.recordings...)
	s.mu.Unlock()
	var calls []Call
	for _, c := range s.recordedCassettes(recs, false) {
		for _, in := range c.Interactions {
			if in.From != cassettes.FromClient || in.Request == nil {
				continue
			}
			m, err := jsonrpc.Parse(in.Request)
			if err != nil {
				continue
			}
			r := matcher.Request{Method: m.Method, Params: m.Params}
			args, _ := jsonrpc.Member(m.Params, "arguments")
			calls = append(calls, callOf(m.Method, r.Tool(), args, m.Params, 0, nil))
		}
	}
	return calls
}
