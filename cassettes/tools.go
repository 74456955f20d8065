package cassettes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
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
	best, dist := "", 3 // a typo is at most two edits away
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < dist {
			best, dist = n, d
		}
	}
	if best != "" {
		s += fmt.Sprintf("; did you mean %q?", best)
	}
	return true, s
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
