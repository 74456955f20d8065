package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpmock/mcpmock/internal/toolschema"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// checkResult passes a tools/call result on, or replaces it with a tool
// error that says why it was withheld.
func (g *Guard) checkResult(session string, msg *jsonrpc.Message, c *call, raw []byte) []byte {
	why, by := g.resultProblem(c.tool, msg.Result)
	if why == "" {
		return raw
	}
	g.decide(event{Session: session, ID: msg.ID, Tool: c.tool, args: c.args}, DecisionWithheld, by, why)
	return toolError(msg.ID, fmt.Sprintf("mcpmock guard: the result of tool %q was withheld: %s", c.tool, why))
}

func (g *Guard) resultProblem(name string, result json.RawMessage) (why, by string) {
	if g.o.MaxResultBytes > 0 && len(result) > g.o.MaxResultBytes {
		return fmt.Sprintf("it is %d bytes, over the limit of %d bytes", len(result), g.o.MaxResultBytes), "--max-result-bytes"
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "it is not a tools/call result: " + err.Error(), "result check"
	}
	if len(g.o.ContentTypes) > 0 {
		for i, c := range r.Content {
			if !slices.Contains(g.o.ContentTypes, c.Type) {
				return fmt.Sprintf("content[%d] is of type %q, which is not allowed (allowed: %s)", i, c.Type, strings.Join(g.o.ContentTypes, ", ")), "--result-content-types"
			}
		}
	}
	if g.o.NoOutputSchema || r.IsError {
		return "", ""
	}
	g.mu.Lock()
	t := g.tools[name]
	g.mu.Unlock()
	if t == nil || len(t.outputSchema) == 0 {
		return "", ""
	}
	s, err := g.schema.get(name, t.outputSchema)
	if err != nil {
		g.log.Warn(fmt.Sprintf("guard: tool %s: its outputSchema is not usable, results are not checked: %v", name, toolschema.OneLine(err.Error())))
		return "", ""
	}
	if len(r.StructuredContent) == 0 || string(r.StructuredContent) == "null" {
		return "the tool declares an outputSchema but the result has no structuredContent", "outputSchema"
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.StructuredContent))
	if err != nil {
		return "its structuredContent is not JSON: " + err.Error(), "outputSchema"
	}
	if err := s.Validate(inst); err != nil {
		return "its structuredContent does not match the tool's outputSchema: " + strings.Join(toolschema.Problems(err), "; "), "outputSchema"
	}
	return "", ""
}

// schemas compiles outputSchemas once per distinct schema text.
type schemas struct {
	mu sync.Mutex // guards byTool
	// byTool maps a tool name to its last compiled schema and its text.
	byTool map[string]compiled
}

type compiled struct {
	text string
	s    *jsonschema.Schema
	err  error
}

func newSchemas() *schemas { return &schemas{byTool: map[string]compiled{}} }

func (sc *schemas) get(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if c, ok := sc.byTool[name]; ok && c.text == string(raw) {
		return c.s, c.err
	}
	c := compiled{text: string(raw)}
	c.s, c.err = toolschema.Compile("output", name, raw)
	sc.byTool[name] = c
	return c.s, c.err
}
