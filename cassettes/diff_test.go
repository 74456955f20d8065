package cassettes

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// call is a client request and its answer, for building cassettes.
type call struct {
	method, params string
	answer         *Message
}

func cassetteOf(calls ...call) *Cassette {
	c := New()
	for i, x := range calls {
		c.Interactions = append(c.Interactions, Interaction{From: FromClient, Request: req(i+1, x.method, x.params), Response: x.answer})
	}
	return c
}

// TestDiffInteractions: requests pair by method and matched params, not by
// position nor id; a paired request compares its answer.
func TestDiffInteractions(t *testing.T) {
	text := func(s string) string { return `{"content":[{"type":"text","text":` + jsonText(s) + `}]}` }
	add := func(a int) string { return `{"name":"add","arguments":{"a":` + itoa(a) + `}}` }
	tests := []struct {
		name     string
		old, new []call
		want     []string
	}{
		{"reordered, other ids, volatile _meta, empty arguments",
			[]call{
				{"tools/call", add(1), res(1, text("1"))},
				{"tools/call", `{"name":"echo","arguments":{},"_meta":{"progressToken":7}}`, res(1, text("e"))},
				{"resources/read", `{"uri":"file:///a","_meta":{"traceparent":"00-1"}}`, res(1, `{"contents":[]}`)},
			},
			[]call{
				{"resources/read", `{"_meta":{"traceparent":"00-2"},"uri":"file:///a"}`, res(9, `{"contents":[],"_meta":{"x":1}}`)},
				{"tools/call", `{"name":"echo"}`, res(7, text("e"))},
				{"tools/call", add(1), res(8, text("1"))},
			}, nil},
		{"repeats pair in order",
			[]call{{"tools/call", add(1), res(1, text("1"))}, {"tools/call", add(1), res(2, text("2"))}},
			[]call{{"tools/call", add(1), res(1, text("1"))}, {"tools/call", add(1), res(2, text("3"))}},
			[]string{`changed: interaction 2: tools/call add {"a":1}: content[0].text was "2", now "3"`}},
		{"a long text shows where it differs",
			[]call{{"tools/call", add(1), res(1, text("Resource 1: This is a plaintext resource created at 10:04:35 PM"))}},
			[]call{{"tools/call", add(1), res(1, text("Resource 1: This is a plaintext resource created at 10:05:39 PM"))}},
			[]string{`changed: interaction 1: tools/call add {"a":1}: content[0].text was "…urce created at 10:04:35 PM", now "…urce created at 10:05:39 PM"`}},
		{"missing and new",
			[]call{{"tools/call", add(1), res(1, text("1"))}, {"ping", `{}`, res(2, `{}`)}},
			[]call{{"ping", `{}`, res(1, `{}`)}, {"tools/call", add(2), res(2, text("2"))}},
			[]string{
				`BREAKING: interaction 1: tools/call add {"a":1}: missing from the new cassette`,
				`changed: new interaction 2: tools/call add {"a":2}`,
			}},
		{"now fails, now succeeds, another error",
			[]call{{"tools/call", add(1), res(1, text("1"))}, {"tools/call", add(2), fails(2, -32602, "bad")}, {"tools/call", add(3), fails(3, -32602, "bad")}},
			[]call{{"tools/call", add(1), fails(1, -32602, "unknown tool add")}, {"tools/call", add(2), res(2, text("2"))}, {"tools/call", add(3), fails(3, -32603, "worse")}},
			[]string{
				`BREAKING: interaction 1: tools/call add {"a":1}: now fails: error -32602: unknown tool add`,
				`changed: interaction 2: tools/call add {"a":2}: failed before (error -32602: bad), now a result`,
				`changed: interaction 3: tools/call add {"a":3}: the error changed from error -32602: bad to error -32603: worse`,
			}},
		{"no longer answered",
			[]call{{"tools/call", add(1), res(1, text("1"))}},
			[]call{{"tools/call", add(1), nil}},
			[]string{`BREAKING: interaction 1: tools/call add {"a":1}: now fails: no response`}},
		{"tool error",
			[]call{{"tools/call", add(1), res(1, text("1"))}, {"tools/call", add(2), res(2, `{"isError":true,"content":[{"type":"text","text":"rate limit"}]}`)}},
			[]call{{"tools/call", add(1), res(1, `{"isError":true,"content":[{"type":"text","text":"invalid params: missing c"}]}`)}, {"tools/call", add(2), res(2, text("2"))}},
			[]string{
				`BREAKING: interaction 1: tools/call add {"a":1}: now a tool error: "invalid params: missing c"`,
				`changed: interaction 2: tools/call add {"a":2}: no longer a tool error`,
			}},
		{"content types",
			[]call{{"tools/call", add(1), res(1, text("1"))}},
			[]call{{"tools/call", add(1), res(1, `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`)}},
			[]string{`BREAKING: interaction 1: tools/call add {"a":1}: the content block types changed from [text] to [image]`}},
		{"structured content shape",
			[]call{{"tools/call", add(1), res(1, `{"content":[],"structuredContent":{"sum":1,"unit":"x","at":"t"}}`)}},
			[]call{{"tools/call", add(1), res(1, `{"content":[],"structuredContent":{"sum":"1","at":"u","note":"n"}}`)}},
			[]string{
				`BREAKING: interaction 1: tools/call add {"a":1}: structuredContent.sum changed type from number to string`,
				`BREAKING: interaction 1: tools/call add {"a":1}: structuredContent.unit went away (it was "x")`,
				`changed: interaction 1: tools/call add {"a":1}: structuredContent.at was "t", now "u" (and 1 more difference)`,
			}},
		{"handshake: any client, server info",
			[]call{{"initialize", `{"clientInfo":{"name":"a"}}`, res(1, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}`)}},
			[]call{{"initialize", `{"clientInfo":{"name":"b"}}`, res(1, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"2"}}`)}},
			[]string{
				`changed: interaction 1: initialize: the server was "s 1", is now "s 2"`,
				`BREAKING: interaction 1: initialize: capabilities.tools.listChanged went away (it was true)`,
				`changed: interaction 1: initialize: protocolVersion was "2025-06-18", now "2025-11-25"`,
			}},
		{"tools/list results are tools, not results",
			[]call{{"tools/list", `{}`, res(1, `{"tools":[{"name":"a"}]}`)}},
			[]call{{"tools/list", `{}`, res(1, `{"tools":[{"name":"a","description":"d"}]}`)}},
			[]string{`changed: tool a: the description changed from none to "d"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(cassetteOf(tt.old...), cassetteOf(tt.new...))
			if diff := cmp.Diff(tt.want, strs(got)); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffToolLists: the tools come from every page and from the list
// after list_changed (the last listing of a tool counts); they are compared
// only when both cassettes listed tools.
func TestDiffToolLists(t *testing.T) {
	paged := cassetteOf(
		call{"tools/list", `{}`, res(1, `{"tools":[{"name":"a"}],"nextCursor":"p2"}`)},
		call{"tools/list", `{"cursor":"p2"}`, res(2, `{"tools":[{"name":"b"}]}`)},
		call{"tools/list", `{}`, res(3, `{"tools":[{"name":"a","description":"after list_changed"}]}`)},
	)
	one := cassetteOf(
		call{"tools/list", `{}`, res(1, `{"tools":[{"name":"b"},{"name":"a","description":"after list_changed"}]}`)},
		call{"tools/list", `{"cursor":"p2"}`, res(2, `{"tools":[]}`)},
		call{"tools/list", `{}`, res(3, `{"tools":[{"name":"b"},{"name":"a","description":"after list_changed"}]}`)},
	)
	if got := Diff(paged, one); len(got) != 0 {
		t.Errorf("Diff of the same tools on other pages = %v", strs(got))
	}
	none := cassetteOf(call{"ping", `{}`, res(1, `{}`)})
	got := strs(Diff(paged, none))
	want := []string{
		"BREAKING: interaction 1: tools/list: missing from the new cassette",
		`BREAKING: interaction 2: tools/list {"cursor":"p2"}: missing from the new cassette`,
		"BREAKING: interaction 3: tools/list: missing from the new cassette",
		"changed: new interaction 1: ping",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Diff against a cassette without tools/list (-want +got):\n%s", diff)
	}
}

// TestDiffJSON: the JSON of a change is the documented shape.
func TestDiffJSON(t *testing.T) {
	old := cassetteOf(call{"tools/list", `{}`, res(1, `{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}`)})
	new := cassetteOf(call{"tools/list", `{}`, res(1, `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"c":{"type":"number"}},"required":["c"]}}]}`)})
	got, err := json.Marshal(Diff(old, new))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"breaking":true,"kind":"required","tool":"add","schema":"inputSchema","path":"c","new":["c"],"text":"tool add: argument \"c\" is now required (new, of type \"number\")"}]`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func jsonText(s string) string { b, _ := json.Marshal(s); return string(b) }
func itoa(n int) string        { b, _ := json.Marshal(n); return string(b) }
