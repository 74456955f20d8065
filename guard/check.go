package guard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/toolschema"
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
	s, err := g.schema.Get(name, t.outputSchema)
	if err != nil {
		g.log.Warn(fmt.Sprintf("guard: tool %s: its outputSchema is not usable, results are not checked: %v", name, toolschema.OneLine(err.Error())))
		return "", ""
	}
	if why := toolschema.StructuredProblem(s, r.StructuredContent); why != "" {
		return why, "outputSchema"
	}
	return "", ""
}
