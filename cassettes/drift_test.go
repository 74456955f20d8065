package cassettes

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDriftOf(t *testing.T) {
	req := func(method, params string) json.RawMessage {
		return json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`)
	}
	res := func(result string) *Message {
		return &Message{From: FromServer, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`)}
	}
	fail := &Message{From: FromServer, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`)}
	call := req("tools/call", `{"name":"add"}`)
	list := req("tools/list", `{}`)
	toolsV1 := `{"tools":[{"name":"add","description":"adds","inputSchema":{"properties":{"a":{"type":"number"}},"required":["a"]}},{"name":"gone"}]}`
	toolsV2 := `{"tools":[{"name":"add","description":"sums","inputSchema":{"properties":{"a":{"type":"string"},"b":{"type":"number"}},"required":["a","b"]}},{"name":"new"}]}`
	tests := []struct {
		name      string
		rec, live *Interaction
		callErr   error
		want      []Drift
	}{
		{"same", &Interaction{Request: call, Response: res(`{"x":1,"_meta":{"t":1}}`)}, &Interaction{Response: res(`{"x":1,"_meta":{"t":2}}`)}, nil, nil},
		{"call error", &Interaction{Request: call, Response: res(`{}`)}, nil, errors.New("eof"),
			[]Drift{{Breaking: true, Text: "interaction 3: tools/call add: eof"}}},
		{"now fails", &Interaction{Request: call, Response: res(`{}`)}, &Interaction{Response: fail}, nil,
			[]Drift{{Breaking: true, Text: "interaction 3: tools/call add: now fails: error -32602: unknown tool"}}},
		{"now succeeds", &Interaction{Request: call, Response: fail}, &Interaction{Response: res(`{}`)}, nil,
			[]Drift{{Text: "interaction 3: tools/call add: failed when recorded (error -32602: unknown tool), now succeeds"}}},
		{"result changed", &Interaction{Request: call, Response: res(`{"x":1}`)}, &Interaction{Response: res(`{"x":2}`)}, nil,
			[]Drift{{Text: "interaction 3: tools/call add: the result changed:\n    recorded {\"x\":1}\n    live     {\"x\":2}"}}},
		{"server changed", &Interaction{Request: req("initialize", `{}`), Response: res(`{"serverInfo":{"name":"s","version":"1"}}`)},
			&Interaction{Response: res(`{"serverInfo":{"name":"s","version":"2"}}`)}, nil,
			[]Drift{{Text: `interaction 3: the server was "s 1" when recorded, is "s 2" now`}}},
		{"tools", &Interaction{Request: list, Response: res(toolsV1)}, &Interaction{Response: res(toolsV2)}, nil, []Drift{
			{Breaking: true, Text: `tool add: argument "b" is now required`},
			{Breaking: true, Text: "tool add: argument \"a\" changed type from \"number\" to \"string\""},
			{Text: "tool add: the description changed"},
			{Breaking: true, Text: "tool gone was removed"},
			{Text: "tool new was added"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DriftOf(2, tt.rec, tt.live, tt.callErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DriftOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDriftString(t *testing.T) {
	for _, tt := range []struct {
		d    Drift
		want string
	}{
		{Drift{Breaking: true, Text: "x"}, "BREAKING: x"},
		{Drift{Text: "x"}, "changed: x"},
	} {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.d, got, tt.want)
		}
	}
}
