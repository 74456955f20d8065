package cassettes

// diff_interactions.go: the client requests of two cassettes paired as the
// default matcher pairs a live request with a recorded one, and their
// answers compared.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// request is one client request of a cassette, ready to be paired.
type request struct {
	n      int // 1-based number of the interaction
	in     *Interaction
	method string
	tool   string
	key    string // what the default matcher compares, canonical
	label  string // method, tool and compact arguments
}

// requestsOf returns the client requests of c that Diff compares.
func requestsOf(c *Cassette) []request {
	var out []request
	for i := range c.Interactions {
		if r, ok := requestOf(i+1, &c.Interactions[i]); ok {
			out = append(out, r)
		}
	}
	return out
}

// requestOf returns the n-th interaction as a request to compare; ok is
// false for one that Diff does not compare.
func requestOf(n int, in *Interaction) (r request, ok bool) {
	if in.From != FromClient || in.Request == nil || in.Scripted() {
		return r, false
	}
	msg, err := jsonrpc.Parse(in.Request)
	if err != nil || msg.Method == "" {
		return r, false
	}
	r = request{n: n, in: in, method: msg.Method}
	r.tool, _ = mcp.ToolName(msg.Params)
	compared := comparedParams(msg.Method, msg.Params)
	key, _ := json.Marshal(compared)
	r.key = msg.Method + "\x00" + string(key)
	r.label = msg.Method
	switch {
	case msg.Method == "tools/call":
		r.label += " " + r.tool
		if args, ok := asObject(compared)["arguments"]; ok {
			r.label += " " + short(args, 80)
		}
	case compared != nil:
		if m, ok := compared.(map[string]any); !ok || len(m) > 0 {
			r.label += " " + short(compared, 80)
		}
	}
	return r, true
}

// comparedParams is what the default matcher (package matcher, DESIGN.md
// "Matching") compares of a request's params, decoded: nothing for the
// handshake and ping, name and arguments of tools/call, the cursor of a
// list, and otherwise the params without the _meta keys that change from
// run to run; empty objects dropped at every depth. Params that do not
// parse compare as their text.
func comparedParams(method string, params json.RawMessage) any {
	if mcp.Handshake(method) || method == "ping" {
		return nil
	}
	if len(params) == 0 {
		return map[string]any{}
	}
	v, ok := decodeJSON(params)
	if !ok {
		return string(params)
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return v
	}
	out := map[string]any{}
	switch {
	case method == "tools/call":
		out["name"] = obj["name"]
		if a, ok := obj["arguments"]; ok {
			out["arguments"] = a
		}
	case isList(method):
		if c, ok := obj["cursor"]; ok {
			out["cursor"] = c
		}
	default:
		for k, v := range obj {
			out[k] = v
		}
		if meta, ok := obj["_meta"].(map[string]any); ok {
			kept := map[string]any{}
			for k, v := range meta {
				if !volatileMeta(k) {
					kept[k] = v
				}
			}
			out["_meta"] = kept
		}
	}
	return dropEmpty(out)
}

func isList(method string) bool {
	_, ok := mcp.ListOf(method)
	return ok
}

// volatileMeta reports a _meta key that changes from run to run: the
// progress token, W3C trace context and the 2026-07-28 per-request keys
// (the rule of package matcher, which cassettes cannot import).
func volatileMeta(key string) bool {
	switch key {
	case "progressToken", "traceparent", "tracestate", "baggage":
		return true
	}
	return strings.HasPrefix(key, mcp.MetaPrefix)
}

// dropEmpty removes, at every depth, object members whose value is an empty
// object (or becomes one): "arguments": {} is no arguments.
func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if m, ok := dropEmpty(e).(map[string]any); ok && len(m) == 0 {
				delete(x, k)
			}
		}
	case []any:
		for _, e := range x {
			dropEmpty(e)
		}
	}
	return v
}

// interactions pairs the requests and compares what was answered.
func (d *differ) interactions(old, new []request) {
	byKey := map[string][]int{} // indexes into new, in order, not yet paired
	for j, r := range new {
		byKey[r.key] = append(byKey[r.key], j)
	}
	paired := make([]bool, len(new))
	for _, a := range old {
		queue := byKey[a.key]
		if len(queue) == 0 {
			d.add(Change{Breaking: true, Kind: KindMissing, Tool: a.tool, Interaction: a.n, Method: a.method, Request: a.label,
				Text: fmt.Sprintf("interaction %d: %s: missing from the new cassette", a.n, a.label)})
			continue
		}
		j := queue[0]
		byKey[a.key] = queue[1:]
		paired[j] = true
		d.answers(a, new[j])
	}
	for j, b := range new {
		if !paired[j] {
			d.add(Change{Kind: KindNew, Tool: b.tool, NewInteraction: b.n, Method: b.method, Request: b.label,
				Text: fmt.Sprintf("new interaction %d: %s", b.n, b.label)})
		}
	}
}

// answer is a response as Diff compares it.
type answer struct {
	state  string // "result", "error", "none" (no response), "raw" (not JSON-RPC)
	err    *jsonrpc.Error
	result json.RawMessage
}

func answerOf(m *Message) answer {
	if m == nil {
		return answer{state: "none"}
	}
	if m.Message == nil {
		return answer{state: "raw"}
	}
	msg, err := jsonrpc.Parse(m.Message)
	switch {
	case err != nil:
		return answer{state: "raw"}
	case msg.Error != nil:
		return answer{state: "error", err: msg.Error}
	}
	return answer{state: "result", result: msg.Result}
}

func (a answer) String() string {
	switch a.state {
	case "none":
		return "no response"
	case "raw":
		return "a response that is not JSON-RPC"
	case "error":
		return fmt.Sprintf("error %d: %s", a.err.Code, a.err.Message)
	}
	return "a result"
}

// answers compares the answers of a paired request.
func (d *differ) answers(a, b request) {
	change := func(breaking bool, kind, path string, old, new any, format string, args ...any) {
		d.add(Change{Breaking: breaking, Kind: kind, Tool: a.tool, Path: path, Interaction: a.n, NewInteraction: b.n,
			Method: a.method, Request: a.label, Old: rawJSON(old), New: rawJSON(new),
			Text: fmt.Sprintf("interaction %d: %s: ", a.n, a.label) + fmt.Sprintf(format, args...)})
	}
	x, y := answerOf(a.in.Response), answerOf(b.in.Response)
	if x.state != "result" || y.state != "result" {
		switch {
		case x.state == y.state && x.state != "error":
		case x.state == "error" && y.state == "error":
			if x.err.Code != y.err.Code || x.err.Message != y.err.Message {
				change(false, KindError, "", x.err, y.err, "the error changed from %s to %s", x, y)
			}
		case x.state == "result":
			change(true, KindError, "", nil, y.err, "now fails: %s", y)
		default:
			change(false, KindError, "", x.err, nil, "failed before (%s), now %s", x, y)
		}
		return
	}
	if a.method == "tools/list" {
		return // the tools are compared as tools
	}
	ra, okA := decodeJSON(stripVolatile(x.result))
	rb, okB := decodeJSON(stripVolatile(y.result))
	if !okA || !okB {
		if !jsonEqual(x.result, y.result) {
			change(false, KindResult, "", nil, nil, "the result changed")
		}
		return
	}
	if mcp.Handshake(a.method) {
		sa, sb := ServerInfoOf(a.in), ServerInfoOf(b.in)
		if sa != nil && sb != nil && *sa != *sb {
			change(false, KindServer, "", sa, sb, "the server was %q, is now %q", strings.TrimSpace(sa.Name+" "+sa.Version), strings.TrimSpace(sb.Name+" "+sb.Version))
		}
		for _, m := range []map[string]any{asObject(ra), asObject(rb)} {
			delete(m, "serverInfo")
		}
	}
	r := resultDiff{}
	if a.method == "tools/call" {
		r.toolCall(asObject(ra), asObject(rb))
	} else {
		r.walk("", ra, rb)
	}
	for _, c := range r.breaking {
		change(true, c.kind, c.path, c.old, c.new, "%s", c.text)
	}
	if len(r.other) > 0 {
		c := r.other[0]
		more := ""
		if n := len(r.other) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more difference%s)", n, plural(n))
		}
		change(false, KindResult, c.path, c.old, c.new, "%s%s", c.text, more)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
