package cassettes

// diff_tools.go: the tools of two cassettes compared, definition by
// definition.

import (
	"fmt"
	"sort"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// toolCatalogue returns the tool definitions a cassette's tools/list results
// hold, by name (the last listing of a name wins), and whether it holds any
// tools/list result at all.
func toolCatalogue(c *Cassette) (map[string]map[string]any, bool) {
	tools := map[string]map[string]any{}
	listed := false
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.From != FromClient || in.Request == nil || in.Scripted() || in.Response == nil {
			continue
		}
		req, err := jsonrpc.Parse(in.Request)
		if err != nil || req.Method != "tools/list" {
			continue
		}
		res := result(in.Response)
		v, ok := decodeJSON(res)
		obj, isObj := v.(map[string]any)
		if !ok || !isObj {
			continue
		}
		listed = true
		list, _ := obj["tools"].([]any)
		for _, t := range list {
			def, ok := t.(map[string]any)
			if !ok {
				continue
			}
			if name, ok := def["name"].(string); ok {
				tools[name] = def
			}
		}
	}
	return tools, listed
}

// tools compares the tool catalogues, by name.
func (d *differ) tools(old, new map[string]map[string]any) {
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range new {
		names[n] = true
	}
	for _, name := range sortedNames(names) {
		a, inOld := old[name]
		b, inNew := new[name]
		switch {
		case !inNew:
			d.add(Change{Breaking: true, Kind: KindToolRemoved, Tool: name, Old: rawJSON(a), Text: fmt.Sprintf("tool %s was removed", name)})
		case !inOld:
			d.add(Change{Kind: KindToolAdded, Tool: name, New: rawJSON(b), Text: fmt.Sprintf("tool %s was added", name)})
		default:
			d.tool(name, a, b)
		}
	}
}

// tool compares two definitions of one tool.
func (d *differ) tool(name string, a, b map[string]any) {
	prefix := "tool " + name + ": "
	for _, m := range []struct{ member, kind string }{{"description", KindDescription}, {"title", KindTitle}} {
		x, y := a[m.member], b[m.member]
		if jsonEqualValues(x, y) {
			continue
		}
		d.add(Change{Kind: m.kind, Tool: name, Old: rawJSON(x), New: rawJSON(y),
			Text: prefix + fmt.Sprintf("the %s changed from %s to %s", m.member, textOf(x), textOf(y))})
	}
	in, _ := a["inputSchema"].(map[string]any)
	inB, _ := b["inputSchema"].(map[string]any)
	sd := schemaDiff{d: d, tool: name, schema: "inputSchema", input: true}
	sd.compare("", in, inB)
	outA, hasA := a["outputSchema"].(map[string]any)
	outB, hasB := b["outputSchema"].(map[string]any)
	switch {
	case hasA && !hasB:
		d.add(Change{Breaking: true, Kind: KindSchemaRemoved, Tool: name, Schema: "outputSchema", Old: rawJSON(outA),
			Text: prefix + "the output schema was removed (structured content may be gone)"})
	case !hasA && hasB:
		d.add(Change{Kind: KindSchemaAdded, Tool: name, Schema: "outputSchema", New: rawJSON(outB),
			Text: prefix + "it now has an output schema"})
	case hasA:
		sd := schemaDiff{d: d, tool: name, schema: "outputSchema"}
		sd.compare("", outA, outB)
	}
	annA, _ := a["annotations"].(map[string]any)
	annB, _ := b["annotations"].(map[string]any)
	for _, k := range sortedNames(union(annA, annB)) {
		x, y := annA[k], annB[k]
		if !jsonEqualValues(x, y) {
			d.add(Change{Kind: KindAnnotations, Tool: name, Path: k, Old: rawJSON(x), New: rawJSON(y),
				Text: prefix + fmt.Sprintf("annotation %s changed from %s to %s", k, textOf(x), textOf(y))})
		}
	}
	for _, k := range sortedNames(union(a, b)) {
		switch k {
		case "name", "description", "title", "inputSchema", "outputSchema", "annotations", "_meta":
			continue
		}
		if x, y := a[k], b[k]; !jsonEqualValues(x, y) {
			d.add(Change{Kind: KindToolMember, Tool: name, Path: k, Old: rawJSON(x), New: rawJSON(y),
				Text: prefix + fmt.Sprintf("%s changed from %s to %s", k, textOf(x), textOf(y))})
		}
	}
}

// textOf shows a value in a change line: "none" when absent, else compact
// JSON cut at 80 bytes.
func textOf(v any) string {
	if v == nil {
		return "none"
	}
	return short(v, 80)
}

// union returns the keys of two maps.
func union[V any](a, b map[string]V) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
