package mcpmocktest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// CassetteBuilder writes a cassette in Go, for tests that need no
// recording: a server that answers the handshake of both protocol eras
// (server/discover, and initialize made from it), tools/list with the tools
// declared, and the tool calls scripted, each matched by its exact arguments
// as a recorded call is.
//
//	c := mcpmocktest.NewCassette().
//		Tool("get_weather", `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`).
//		Call("get_weather", map[string]any{"location": "Paris"}).Return("Sunny, 22°C").
//		Call("get_weather", map[string]any{"location": "Atlantis"}).ReturnToolError("API rate limit exceeded").
//		Build()
//	srv := mcpmocktest.NewServerFromCassette(t, c, nil)
//
// The zero CassetteBuilder is not ready for use; call NewCassette.
type CassetteBuilder struct {
	name, version string
	instructions  string
	tools         []json.RawMessage
	calls         []cassettes.Interaction
	err           error // the first programmer's mistake, reported by Build
}

// NewCassette starts a cassette of a server named "mcpmocktest".
func NewCassette() *CassetteBuilder {
	return &CassetteBuilder{name: "mcpmocktest", version: "1.0.0", tools: []json.RawMessage{}}
}

// ServerInfo sets the server's name and version (its serverInfo).
func (b *CassetteBuilder) ServerInfo(name, version string) *CassetteBuilder {
	b.name, b.version = name, version
	return b
}

// Instructions sets the server's instructions.
func (b *CassetteBuilder) Instructions(text string) *CassetteBuilder {
	b.instructions = text
	return b
}

// Tool declares a tool in the tools/list answer. inputSchema is a JSON
// Schema object: JSON text, a json.RawMessage, a map or any value
// encoding/json encodes; nil means {"type":"object"}.
func (b *CassetteBuilder) Tool(name string, inputSchema any) *CassetteBuilder {
	schema := json.RawMessage(`{"type":"object"}`)
	if inputSchema != nil {
		var err error
		if schema, err = toJSON(inputSchema); err != nil {
			b.fail(fmt.Errorf("tool %q: input schema: %w", name, err))
			return b
		}
	}
	tool, _ := json.Marshal(map[string]any{"name": name, "inputSchema": schema})
	b.tools = append(b.tools, tool)
	return b
}

// Call scripts a call of the tool with exactly these arguments (anything
// encoding/json encodes, JSON text in a string, or nil for none); the
// Reply says what it answers.
func (b *CassetteBuilder) Call(tool string, args any) *Reply {
	params := map[string]any{"name": tool}
	if args != nil {
		raw, err := toJSON(args)
		if err != nil {
			b.fail(fmt.Errorf("call of %q: arguments: %w", tool, err))
		}
		params["arguments"] = raw
	}
	p, _ := json.Marshal(params)
	return &Reply{b: b, in: cassettes.Interaction{From: cassettes.FromClient, Request: p}}
}

func (b *CassetteBuilder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Reply is what a scripted call of a CassetteBuilder answers. Its Return
// methods (named as Stub's) add the call to the cassette and give the builder back.
type Reply struct {
	b  *CassetteBuilder
	in cassettes.Interaction
}

// Times makes the call answer at most n times in a session (n > 0), or
// always (n < 0); the default is the recording's rule: once, then again
// only when no other call matches.
func (r *Reply) Times(n int) *Reply {
	r.in.Times = n
	return r
}

// Return answers a tool result with one text block per text, as
// Stub.Return does.
func (r *Reply) Return(texts ...string) *CassetteBuilder {
	return r.result(textResult(texts, false))
}

// ReturnResult answers the given result (anything encoding/json encodes).
func (r *Reply) ReturnResult(result any) *CassetteBuilder {
	raw, err := toJSON(result)
	if err != nil {
		r.b.fail(fmt.Errorf("result: %w", err))
		return r.b
	}
	return r.result(raw)
}

// ReturnToolError answers a tool result with isError: true.
func (r *Reply) ReturnToolError(text string) *CassetteBuilder {
	return r.result(textResult([]string{text}, true))
}

// ReturnError answers a JSON-RPC error (a protocol error).
func (r *Reply) ReturnError(code int, message string) *CassetteBuilder {
	return r.add(jsonrpc.ErrorResponse("0", &jsonrpc.Error{Code: code, Message: message}))
}

func (r *Reply) result(v any) *CassetteBuilder {
	raw, err := toJSON(v)
	if err != nil {
		r.b.fail(err)
		return r.b
	}
	if m, _ := jsonrpc.Member(raw, "resultType"); m == nil && len(raw) > 0 && raw[0] == '{' {
		raw, _ = jsonrpc.SetMember(raw, json.RawMessage(`"complete"`), "resultType")
	}
	return r.add(jsonrpc.Response("0", raw))
}

func (r *Reply) add(resp []byte) *CassetteBuilder {
	n := len(r.b.calls) + 3 // after server/discover and tools/list
	id := jsonrpc.IntID(int64(n))
	r.in.Request = jsonrpc.Request(id, "tools/call", r.in.Request)
	out, _ := jsonrpc.WithID(resp, id)
	r.in.Response = &cassettes.Message{From: cassettes.FromServer, Message: out}
	r.b.calls = append(r.b.calls, r.in)
	return r.b
}

// Build returns the cassette. It panics on a programmer's mistake made while
// building (arguments, a schema or a result that is not JSON).
func (b *CassetteBuilder) Build() *cassettes.Cassette {
	if b.err != nil {
		panic("mcpmocktest: NewCassette: " + b.err.Error())
	}
	c := cassettes.New()
	c.Meta = cassettes.Meta{RecordedBy: "mcpmocktest", Note: "written in Go with mcpmocktest.NewCassette"}
	info, _ := json.Marshal(map[string]string{"name": b.name, "version": b.version})
	newestFirst := mcp.Versions()
	slices.Reverse(newestFirst)
	discover := map[string]any{
		"resultType":        "complete",
		"ttlMs":             0,
		"supportedVersions": newestFirst,
		"capabilities":      map[string]any{"tools": map[string]any{"listChanged": true}},
		"_meta":             map[string]json.RawMessage{mcp.MetaServerInfo: info},
	}
	if b.instructions != "" {
		discover["instructions"] = b.instructions
	}
	result, _ := json.Marshal(discover)
	c.Interactions = append(c.Interactions, cassettes.Interaction{
		From:     cassettes.FromClient,
		Request:  jsonrpc.Request("1", "server/discover", json.RawMessage(`{}`)),
		Response: &cassettes.Message{From: cassettes.FromServer, Message: jsonrpc.Response("1", result)},
	})
	tools, _ := json.Marshal(map[string]any{"resultType": "complete", "ttlMs": 0, "tools": b.tools})
	c.Interactions = append(c.Interactions, cassettes.Interaction{
		From:     cassettes.FromClient,
		Request:  jsonrpc.Request("2", "tools/list", json.RawMessage(`{}`)),
		Response: &cassettes.Message{From: cassettes.FromServer, Message: jsonrpc.Response("2", tools)},
		Times:    -1,
	})
	c.Interactions = append(c.Interactions, b.calls...)
	return c
}

// Save builds the cassette and writes it to path, for mcpmock replay or a
// later test.
func (b *CassetteBuilder) Save(path string) error {
	return cassettes.Save(path, b.Build())
}
