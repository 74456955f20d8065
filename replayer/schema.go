package replayer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpmock/mcpmock/internal/toolschema"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// Schema validation of tools/call.
//
// A real server checks a call's arguments against the tool's inputSchema
// before it runs the tool, so replay does too: the schemas are those of the
// recorded tools/list results (the first listing of a tool wins), compiled
// once per engine on the first tools/call. A schema without "$schema" is
// JSON Schema 2020-12 (as MCP says); one that declares an older draft is
// read as that draft. A call whose arguments do not validate is answered as
// the session's protocol version says (see invalidArguments), unless the
// cassette holds a recorded call that matches it: the recording wins, since
// the real server answered that very call. Options.NoSchemaValidation turns
// all of this off.

// toolSchemas are the compiled schemas of the tools of one cassette.
type toolSchemas struct {
	once    sync.Once
	input   map[string]*jsonschema.Schema // tool name → inputSchema
	output  map[string]*jsonschema.Schema // tool name → outputSchema
	version string                        // the recorded initialize result's protocolVersion
	// problems are schemas that did not compile and recorded results that
	// break their outputSchema, reported once through the logger.
	problems []error
}

// compileToolSchemas reads the tools/list results and the initialize result
// of c and compiles every tool's input and output schema.
func compileToolSchemas(c *cassettes.Cassette) *toolSchemas {
	ts := &toolSchemas{input: map[string]*jsonschema.Schema{}, output: map[string]*jsonschema.Schema{}}
	var req jsonrpc.Message // each request's, read in place: a large cassette makes no garbage here
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.From != cassettes.FromClient || in.Request == nil || in.Response == nil || in.Scripted() {
			continue
		}
		if err := jsonrpc.ParseValidInto(&req, in.Request); err != nil || (req.Method != "initialize" && req.Method != "tools/list") {
			continue
		}
		resp, err := jsonrpc.ParseValid(in.Response.Message)
		if err != nil || resp.Result == nil {
			continue
		}
		switch req.Method {
		case "initialize":
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(resp.Result, &r) == nil && ts.version == "" {
				ts.version = r.ProtocolVersion
			}
		case "tools/list":
			var r struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			}
			if json.Unmarshal(resp.Result, &r) != nil {
				continue
			}
			for _, t := range r.Tools {
				if _, seen := ts.input[t.Name]; !seen && len(t.InputSchema) > 0 {
					ts.input[t.Name] = ts.compile("input", t.Name, t.InputSchema, i)
				}
				if _, seen := ts.output[t.Name]; !seen && len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
					ts.output[t.Name] = ts.compile("output", t.Name, t.OutputSchema, i)
				}
			}
		}
	}
	return ts
}

// compile compiles one schema; one that does not compile is noted and not
// enforced (nil).
func (ts *toolSchemas) compile(kind, tool string, raw json.RawMessage, at int) *jsonschema.Schema {
	s, err := toolschema.Compile(kind, tool, raw)
	if err == nil {
		return s
	}
	ts.problems = append(ts.problems, fmt.Errorf("interaction %d: tool %q: its %sSchema is not usable, replay does not check it: %v", at+1, tool, kind, toolschema.OneLine(err.Error())))
	return nil
}

// schemas returns the engine's compiled tool schemas, compiling them on
// first use and logging what is wrong with them.
func (e *Engine) schemas() *toolSchemas {
	e.toolSchemas.once.Do(func() {
		ts := compileToolSchemas(e.cassette)
		ts.problems = append(ts.problems, checkOutputs(e.cassette, ts)...)
		e.toolSchemas.input, e.toolSchemas.output = ts.input, ts.output
		e.toolSchemas.version, e.toolSchemas.problems = ts.version, ts.problems
		for _, p := range ts.problems {
			e.opts.Logger.Warn(p.Error())
		}
	})
	return &e.toolSchemas
}

// validateArgs checks the arguments of a tools/call against the tool's
// recorded inputSchema. It returns nil when the call may go on to matching:
// validation is off, the request is no tools/call, the tool has no recorded
// schema, the arguments are valid, or a recorded call matches them. Otherwise
// it returns the plan that answers the invalid call.
func (s *session) validateArgs(msg *jsonrpc.Message, live matcher.Request) *answerPlan {
	e := s.e
	if e.opts.NoSchemaValidation || msg.Method != "tools/call" {
		return nil
	}
	// Most calls are of tools without a recorded schema: the name alone
	// says so, before the params are decoded.
	ts := e.schemas()
	if len(ts.input) == 0 || ts.input[live.Tool()] == nil {
		return nil
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return nil
	}
	sch := ts.input[p.Name]
	if sch == nil {
		return nil
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil
	}
	// The recording wins: the real server answered this very call.
	for _, n := range e.index.candidates(live) {
		if r := &e.requests[n]; r.m.Match(r.req, live).Match {
			return nil
		}
	}
	version, _ := p.Meta[mcp.MetaProtocolVersion].(string)
	if version == "" {
		version = ts.version
	}
	problems := toolschema.Problems(verr)
	text := fmt.Sprintf("Invalid arguments for tool %s: %s", p.Name, strings.Join(problems, "; "))
	e.opts.Logger.Warn(text + " (checked against the recorded inputSchema)")
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: invalidArguments(msg.ID, version, text, p.Name, problems)}}}
}

// invalidArguments answers a call with invalid arguments as a server of the
// protocol version does: up to 2025-06-18 with JSON-RPC error -32602
// (Invalid params); from 2025-11-25 on, which makes input validation a tool
// execution error, with a tool result with isError true that the model can
// read and correct (and resultType "complete" from 2026-07-28). An unknown
// version is taken as the newest stateful one.
func invalidArguments(id jsonrpc.ID, version, text, tool string, problems []string) []byte {
	if version != "" && !mcp.ToolInputErrors(version) {
		data, _ := json.Marshal(map[string]any{"tool": tool, "errors": problems})
		return jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: text, Data: data})
	}
	result := map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	}
	if mcp.Stateless(version) {
		result["resultType"] = "complete"
	}
	raw, _ := json.Marshal(result)
	return jsonrpc.Response(id, raw)
}

// checkOutputs validates the structuredContent of every recorded tools/call
// result against the tool's outputSchema.
func checkOutputs(c *cassettes.Cassette, ts *toolSchemas) []error {
	if len(ts.output) == 0 {
		return nil // no tool declares an outputSchema: nothing to check
	}
	var errs []error
	var req jsonrpc.Message // read in place, as compileToolSchemas does
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.From != cassettes.FromClient || in.Request == nil || in.Response == nil {
			continue
		}
		if err := jsonrpc.ParseValidInto(&req, in.Request); err != nil || req.Method != "tools/call" {
			continue
		}
		if sch := ts.output[matcher.Request{Method: req.Method, Params: req.Params}.Tool()]; sch == nil {
			continue // the common case, without decoding the result
		}
		resp, err := jsonrpc.ParseValid(in.Response.Message)
		if err != nil || resp.Result == nil {
			continue
		}
		var p struct {
			Name string `json:"name"`
		}
		var r struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		if json.Unmarshal(req.Params, &p) != nil || json.Unmarshal(resp.Result, &r) != nil {
			continue
		}
		sch := ts.output[p.Name]
		if sch == nil || r.IsError {
			continue
		}
		if len(r.StructuredContent) == 0 {
			errs = append(errs, fmt.Errorf("interaction %d: tool %q has an outputSchema but its result has no structuredContent", i+1, p.Name))
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.StructuredContent))
		if err != nil {
			continue
		}
		if err := sch.Validate(inst); err != nil {
			errs = append(errs, fmt.Errorf("interaction %d: tool %q: structuredContent does not match its outputSchema: %s", i+1, p.Name, strings.Join(toolschema.Problems(err), "; ")))
		}
	}
	return errs
}

// CheckOutputSchemas checks a cassette's tool schemas: every recorded
// tools/list schema must compile, and the structuredContent of every
// recorded successful tools/call result must validate against the tool's
// outputSchema (and be present when the tool declares one). Each problem is
// one error naming the interaction (1-based) and the tool. For cassette lint;
// replay logs the same problems as warnings.
func CheckOutputSchemas(c *cassettes.Cassette) []error {
	ts := compileToolSchemas(c)
	return append(ts.problems, checkOutputs(c, ts)...)
}
