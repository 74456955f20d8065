package toolschema

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"
)

// Cache compiles the schemas of one kind ("input" or "output") once per
// tool and schema text: a tool whose schema changed is compiled again. Its
// methods are safe for concurrent use; the zero value is not usable (use
// NewCache).
type Cache struct {
	kind string
	mu   sync.Mutex // guards byTool
	// byTool maps a tool name to its last compiled schema and its text.
	byTool map[string]compiled
}

type compiled struct {
	text string
	s    *Schema
	err  error
}

// NewCache returns an empty Cache of schemas of the given kind.
func NewCache(kind string) *Cache { return &Cache{kind: kind, byTool: map[string]compiled{}} }

// Get returns the compiled schema raw of the tool, compiling it the first
// time this text is seen for the tool.
func (c *Cache) Get(tool string, raw json.RawMessage) (*Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byTool[tool]; ok && e.text == string(raw) {
		return e.s, e.err
	}
	e := compiled{text: string(raw)}
	e.s, e.err = Compile(c.kind, tool, raw)
	c.byTool[tool] = e
	return e.s, e.err
}

// StructuredProblem says why the structuredContent of a tools/call result
// (nil or null for none) does not conform to the tool's compiled
// outputSchema s, as the tools page of MCP asks of a server that declares
// one; "" when it conforms. A tool error (isError) is not held to the
// schema: the caller leaves it out.
func StructuredProblem(s *Schema, structured json.RawMessage) string {
	if len(structured) == 0 || string(structured) == "null" {
		return "the tool declares an outputSchema but the result has no structuredContent"
	}
	if !gjson.ValidBytes(structured) {
		_, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
		return "its structuredContent is not JSON: " + err.Error()
	}
	if err := s.Validate(instance(gjson.ParseBytes(structured))); err != nil {
		return "its structuredContent does not match the tool's outputSchema: " + strings.Join(Problems(err), "; ")
	}
	return ""
}

// instance is the JSON value v as the validator takes it, what
// jsonschema.UnmarshalJSON would make of its text (numbers as json.Number,
// exact) in one pass without a decoder: the contract checks validate every
// tools/call result of a tool with an outputSchema (recorder's
// BenchmarkContract).
func instance(v gjson.Result) any {
	switch v.Type {
	case gjson.Null:
		return nil
	case gjson.False:
		return false
	case gjson.True:
		return true
	case gjson.Number:
		return json.Number(v.Raw)
	case gjson.String:
		return v.Str
	}
	if v.IsArray() {
		out := []any{}
		v.ForEach(func(_, e gjson.Result) bool {
			out = append(out, instance(e))
			return true
		})
		return out
	}
	out := map[string]any{}
	v.ForEach(func(k, e gjson.Result) bool {
		out[k.Str] = instance(e)
		return true
	})
	return out
}
