package cassettes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/internal/closest"
)

// ToolNames returns the names of the tools the recording knows, sorted:
// those its tools/list results list and those its requests call. Scripted
// interactions do not count.
func (c *Cassette) ToolNames() []string {
	seen := map[string]bool{}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.Scripted() || in.From != FromClient || in.Request == nil {
			continue
		}
		req := gjson.ParseBytes(in.Request)
		switch req.Get("method").String() {
		case "tools/call":
			if name := req.Get("params.name"); name.Type == gjson.String {
				seen[name.String()] = true
			}
		case "tools/list":
			if in.Response != nil {
				for _, t := range gjson.GetBytes(in.Response.Message, "result.tools.#.name").Array() {
					seen[t.String()] = true
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// UnknownTool says, for a tool name that a script or a rule names, whether
// the recording knows no such tool, and if so what it knows: its tools, and
// the closest name when the given one looks like a typo of it.
func (c *Cassette) UnknownTool(name string) (unknown bool, known string) {
	names := c.ToolNames()
	if slices.Contains(names, name) {
		return false, ""
	}
	if len(names) == 0 {
		return true, "the cassette has no tools"
	}
	s := "its tools: " + strings.Join(names, ", ")
	if best, ok := closest.Name(name, names); ok {
		s += fmt.Sprintf("; did you mean %q?", best)
	}
	return true, s
}
