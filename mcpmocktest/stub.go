package mcpmocktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Stub is scripted behaviour written in Go: what the server answers to a
// request, laid over the recording (Options.Stubs) or making up a whole
// cassette (CassetteBuilder). Stubs are tried before the recording, in
// order; a stub answers every call it matches unless Times, Nth or Every
// narrow it, and on the calls it does not answer the recording answers as
// if there were no stub. Calls are counted per session.
//
//	mcpmocktest.OnCall("get_weather").WithArgs(map[string]any{"location": "Paris"}).
//		Nth(3).ReturnToolError("Failed to fetch weather data: API rate limit exceeded")
//
// A Stub is built by chained calls, each of which changes and returns the
// same Stub. A stub with no Return call and no fault answers what the
// recording answers (useful with Delay). Stubs become the scripted
// interactions of an overlay (cassettes.When and cassettes.Fault); Overlay
// returns that cassette.
type Stub struct {
	method  string
	tool    string
	args    any
	hasArgs bool
	when    cassettes.When
	fault   cassettes.Fault
	notify  bool
	result  any // nil: the recording's answer
	rpcErr  *jsonrpc.Error
	err     error // a programmer's mistake, reported when the stub is used
}

// OnCall returns a stub for tools/call of the named tool, with any
// arguments (narrow it with WithArgs).
func OnCall(tool string) *Stub { return &Stub{method: "tools/call", tool: tool} }

// OnMethod returns a stub for the requests of a method (resources/read,
// prompts/get...), whatever their params (narrow it with WithArgs, which then
// gives params). The request must carry params, as the 2026-07-28 era's
// requests always do.
func OnMethod(method string) *Stub { return &Stub{method: method} }

// WithArgs makes the stub answer only calls whose arguments contain args:
// every member given is in the live arguments with an equal value (numbers as
// numbers); members not given may be anything. args is anything
// encoding/json encodes: a map, a struct, a json.RawMessage, or JSON text
// in a string.
func (s *Stub) WithArgs(args any) *Stub {
	s.args, s.hasArgs = args, true
	return s
}

// Times makes the stub answer the first n matching calls of a session
// (n > 0); later calls are answered by the recording.
func (s *Stub) Times(n int) *Stub {
	if n <= 0 {
		s.err = fmt.Errorf("Times(%d): want a positive count", n)
	}
	s.when.To = n
	return s
}

// Nth makes the stub answer only the nth matching call of a session.
func (s *Stub) Nth(n int) *Stub {
	if n <= 0 {
		s.err = fmt.Errorf("Nth(%d): want a positive call number", n)
	}
	s.when.Nth = n
	return s
}

// Every makes the stub answer every kth matching call of a session (k, 2k,
// 3k...).
func (s *Stub) Every(k int) *Stub {
	if k <= 0 {
		s.err = fmt.Errorf("Every(%d): want a positive count", k)
	}
	s.when.Every = k
	return s
}

// Delay holds the answer back for d. Other requests are answered meanwhile.
func (s *Stub) Delay(d time.Duration) *Stub {
	s.fault.DelayMs = float64(d) / float64(time.Millisecond)
	return s
}

// NoAnswer sends no answer at all: the request hangs until the client gives
// up or cancels it.
func (s *Stub) NoAnswer() *Stub {
	s.fault.NoAnswer = true
	return s
}

// CloseConnection closes the connection instead of answering (over HTTP,
// the response is aborted).
func (s *Stub) CloseConnection() *Stub {
	s.fault.Close = true
	return s
}

// HTTPStatus answers, over HTTP, with this status, headers (Retry-After,
// WWW-Authenticate...) and body instead of the JSON-RPC answer. Over a pipe
// or stdio the client gets a JSON-RPC error saying so.
func (s *Stub) HTTPStatus(status int, headers map[string]string, body string) *Stub {
	s.fault.HTTPStatus, s.fault.HTTPHeaders, s.fault.HTTPBody = status, headers, body
	return s
}

// NotifyToolsChanged sends notifications/tools/list_changed before the
// answer.
func (s *Stub) NotifyToolsChanged() *Stub {
	s.notify = true
	return s
}

// Return answers a tool result whose content is one text block per text.
func (s *Stub) Return(texts ...string) *Stub {
	s.result, s.rpcErr = textResult(texts, false), nil
	return s
}

// ReturnResult answers the given result (anything encoding/json encodes:
// a map, an SDK result type, a json.RawMessage).
func (s *Stub) ReturnResult(result any) *Stub {
	if result == nil {
		result = json.RawMessage(`{}`)
	}
	s.result, s.rpcErr = result, nil
	return s
}

// ReturnToolError answers a tool result with isError: true and text as its
// content, as a tool that failed does.
func (s *Stub) ReturnToolError(text string) *Stub {
	s.result, s.rpcErr = textResult([]string{text}, true), nil
	return s
}

// ReturnError answers a JSON-RPC error with the given code and message (a
// protocol error, such as -32602 for invalid params).
func (s *Stub) ReturnError(code int, message string) *Stub {
	s.rpcErr, s.result = &jsonrpc.Error{Code: code, Message: message}, nil
	return s
}

// String describes the stub for messages.
func (s *Stub) String() string {
	what := s.method
	if s.tool != "" {
		what = s.tool
	}
	if s.hasArgs {
		b, _ := toJSON(s.args)
		what += " " + string(b)
	}
	return "stub " + what
}

func textResult(texts []string, isError bool) map[string]any {
	content := make([]map[string]any, 0, len(texts))
	for _, t := range texts {
		content = append(content, map[string]any{"type": "text", "text": t})
	}
	r := map[string]any{"content": content}
	if isError {
		r["isError"] = true
	}
	return r
}

// toJSON encodes v; a string or []byte is taken as JSON text already.
func toJSON(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		return compactJSON(v)
	case []byte:
		return compactJSON(v)
	case string:
		return compactJSON([]byte(v))
	}
	return json.Marshal(v)
}

func compactJSON(b []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// interaction returns the stub as a scripted cassette interaction; n numbers
// its id.
func (s *Stub) interaction(n int) (cassettes.Interaction, error) {
	if s.err != nil {
		return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: %w", s, s.err)
	}
	id := jsonrpc.ID(fmt.Sprintf(`"stub-%d"`, n))
	params := json.RawMessage(`{}`)
	var err error
	if s.method == "tools/call" {
		name, _ := json.Marshal(s.tool)
		params, _ = jsonrpc.SetMember(params, name, "name")
		if s.hasArgs {
			args, err := toJSON(s.args)
			if err != nil {
				return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: arguments: %w", s, err)
			}
			params, _ = jsonrpc.SetMember(params, args, "arguments")
		}
	} else if s.hasArgs {
		if params, err = toJSON(s.args); err != nil {
			return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: params: %w", s, err)
		}
		if len(params) == 0 || params[0] != '{' {
			return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: params must be a JSON object", s)
		}
	}
	when, fault := s.when, s.fault
	in := cassettes.Interaction{
		From:    cassettes.FromClient,
		Request: jsonrpc.Request(id, s.method, params),
		When:    &when,
	}
	if f := fault; f.DelayMs > 0 || f.NoAnswer || f.Close || f.HTTPStatus != 0 {
		in.Fault = &fault
	}
	switch {
	case s.rpcErr != nil:
		in.Response = &cassettes.Message{From: cassettes.FromServer, Message: jsonrpc.ErrorResponse(id, s.rpcErr)}
	case s.result != nil:
		result, err := toJSON(s.result)
		if err != nil {
			return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: result: %w", s, err)
		}
		in.Response = &cassettes.Message{From: cassettes.FromServer, Message: jsonrpc.Response(id, result)}
	}
	if s.notify {
		in.Exchange = []cassettes.Message{{From: cassettes.FromServer,
			Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)}}
		if in.Response == nil {
			return cassettes.Interaction{}, fmt.Errorf("mcpmocktest: %v: NotifyToolsChanged needs a Return... answer", s)
		}
	}
	return in, nil
}

// Overlay returns the stubs as an overlay cassette (the form mcpmock replay
// --overlay reads), for saving or inspection.
func Overlay(stubs ...*Stub) (*cassettes.Cassette, error) {
	c := cassettes.New()
	c.Meta.Note = "scripted by mcpmocktest"
	for i, s := range stubs {
		in, err := s.interaction(i + 1)
		if err != nil {
			return nil, err
		}
		c.Interactions = append(c.Interactions, in)
	}
	return c, nil
}
