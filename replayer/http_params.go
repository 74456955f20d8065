package replayer

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// The Mcp-Param-{Name} headers of the 2026-07-28 transport: a tool's
// inputSchema may mark a property with "x-mcp-header": NAME, and a client
// then mirrors the argument at that property's path into the header
// Mcp-Param-NAME. The replay server checks them as a real server does
// (go-sdk's validateParamHeaders): for each marked property of the called
// tool's recorded inputSchema, an argument present and not null needs the
// header, whose value (after Base64 decoding) equals the argument (integers
// compared as numbers); an absent or null argument must come without it.
// A failure is 400 with JSON-RPC error -32020 (HeaderMismatch).

// paramBinding is one marked property: its path of properties keys and the
// NAME of its header.
type paramBinding struct {
	path   []string
	header string
}

// paramBindings are the marked properties of every tool of a cassette, as
// its recorded tools/list results give them (the first definition of a
// tool wins).
type paramBindings struct {
	once  sync.Once
	tools map[string][]paramBinding
}

func (pb *paramBindings) of(c *cassettes.Cassette, tool string) []paramBinding {
	pb.once.Do(func() { pb.tools = collectParamBindings(c) })
	return pb.tools[tool]
}

func collectParamBindings(c *cassettes.Cassette) map[string][]paramBinding {
	tools := map[string][]paramBinding{}
	seen := map[string]bool{}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.From != cassettes.FromClient || in.Request == nil || in.Response == nil {
			continue
		}
		// Cheap test first: most interactions are no tools/list.
		if !strings.Contains(string(in.Request), `"tools/list"`) {
			continue
		}
		req, err := jsonrpc.Parse(in.Request)
		if err != nil || req.Method != "tools/list" {
			continue
		}
		resp, err := jsonrpc.Parse(in.Response.Message)
		if err != nil || resp.Result == nil {
			continue
		}
		var r struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(resp.Result, &r) != nil {
			continue
		}
		for _, t := range r.Tools {
			if seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			var s schemaProps
			if json.Unmarshal(t.InputSchema, &s) == nil {
				if b := s.bindings(nil, nil); len(b) > 0 {
					tools[t.Name] = b
				}
			}
		}
	}
	return tools
}

// schemaProps is the part of a schema that x-mcp-header lives in: only
// chains of properties keys reach a marked property.
type schemaProps struct {
	Header     json.RawMessage        `json:"x-mcp-header"`
	Properties map[string]schemaProps `json:"properties"`
}

func (s schemaProps) bindings(prefix []string, out []paramBinding) []paramBinding {
	for name, p := range s.Properties {
		path := append(append([]string(nil), prefix...), name)
		var header string
		if json.Unmarshal(p.Header, &header) == nil && header != "" {
			out = append(out, paramBinding{path: path, header: header})
		}
		out = p.bindings(path, out)
	}
	return out
}

// checkParamHeaders validates the Mcp-Param-* headers of a tools/call
// against its arguments; "" means they are right.
func checkParamHeaders(hd http.Header, params json.RawMessage, bindings []paramBinding) string {
	if len(bindings) == 0 {
		return ""
	}
	args, _ := jsonrpc.Member(params, "arguments")
	for _, b := range bindings {
		name := mcp.HeaderParamPrefix + b.header
		values := hd.Values(name)
		arg := lookupArg(args, b.path)
		where := strings.Join(b.path, ".")
		if arg == nil || string(arg) == "null" {
			if len(values) > 0 {
				return fmt.Sprintf("Header mismatch: unexpected %s header for absent or null parameter %q", name, where)
			}
			continue
		}
		if len(values) == 0 {
			return fmt.Sprintf("Header mismatch: missing %s header for parameter %q", name, where)
		}
		decoded, ok := mcp.DecodeValue(values[0])
		if !ok {
			return fmt.Sprintf("Header mismatch: %s header value %q is malformed", name, values[0])
		}
		body, ok := headerPrimitive(arg)
		if !ok {
			return fmt.Sprintf("Header mismatch: %s header present but body parameter %q is not a string, integer or boolean", name, where)
		}
		if !primitiveEqual(decoded, body) {
			return fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value '%s'", name, values[0], body)
		}
	}
	return ""
}

// lookupArg returns the argument at path, or nil.
func lookupArg(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, key := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil
		}
		v, err := jsonrpc.Member(cur, key)
		if err != nil || v == nil {
			return nil
		}
		cur = v
	}
	return cur
}

// headerPrimitive is the header form of a string, boolean or safe integer
// argument.
func headerPrimitive(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// primitiveEqual compares a decoded header value with the body's: integers
// as numbers (42.0 equals 42), the rest as strings.
func primitiveEqual(header, body string) bool {
	if n, err := strconv.ParseInt(body, 10, 64); err == nil {
		f, err := strconv.ParseFloat(header, 64)
		return err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53-1 && int64(f) == n
	}
	return header == body
}
