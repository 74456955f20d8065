package cassettes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// fakeLive answers each request by its method: a result, or an error of
// the call; it counts the notifications.
type fakeLive struct {
	results  map[string]string // method (tools/call: "tools/call NAME") -> result JSON
	fail     map[string]error
	notified []string
}

func (f *fakeLive) Call(ctx context.Context, request []byte) (*Interaction, error) {
	m, err := jsonrpc.Parse(request)
	if err != nil {
		return nil, err
	}
	key := m.Method
	if m.Method == "tools/call" {
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		key += " " + p.Name
	}
	if err := f.fail[key]; err != nil {
		return nil, fmt.Errorf("live server: %s: %w", m.Method, err)
	}
	res, ok := f.results[key]
	if !ok {
		return &Interaction{Response: &Message{From: FromServer, Message: jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: -32601, Message: "no " + key})}}, nil
	}
	return &Interaction{Response: &Message{From: FromServer, Message: jsonrpc.Response(m.ID, json.RawMessage(res))}}, nil
}

func (f *fakeLive) Notify(ctx context.Context, n []byte) error {
	m, _ := jsonrpc.Parse(n)
	f.notified = append(f.notified, m.Method)
	return nil
}

func req(id int, method, params string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
}

func res(id int, result string) *Message {
	return &Message{From: FromServer, Message: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, result))}
}

func fails(id int, code int, msg string) *Message {
	return &Message{From: FromServer, Message: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":%d,"message":%q}}`, id, code, msg))}
}

// TestDrift: the drift check is Diff of the recording and the live answers,
// and says a call that could not be made, once for calls that fail alike.
func TestDrift(t *testing.T) {
	toolsV1 := `{"tools":[{"name":"add","description":"adds","inputSchema":{"properties":{"a":{"type":"number"}},"required":["a"]}},{"name":"gone"}]}`
	toolsV2 := `{"tools":[{"name":"add","description":"sums","inputSchema":{"properties":{"a":{"type":"string"},"b":{"type":"number"}},"required":["a","b"]}},{"name":"new"}]}`
	rec := &Cassette{Version: Version, Interactions: []Interaction{
		{From: FromClient, Request: req(1, "initialize", `{}`), Response: res(1, `{"serverInfo":{"name":"s","version":"1"}}`)},
		{From: FromClient, Notification: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{From: FromClient, Request: req(2, "tools/list", `{}`), Response: res(2, toolsV1)},
		{From: FromClient, Request: req(3, "tools/call", `{"name":"add","arguments":{"a":1}}`), Response: res(3, `{"content":[{"type":"text","text":"1"}]}`)},
		{From: FromClient, Request: req(4, "tools/call", `{"name":"gone"}`), Response: res(4, `{"content":[]}`)},
		{From: FromClient, Request: req(5, "ping", `{}`), Response: res(5, `{}`)},
		{From: FromClient, Request: req(6, "tools/call", `{"name":"echo"}`), Response: fails(6, -32602, "unknown tool"), When: &When{}},
	}}
	t.Run("same", func(t *testing.T) {
		live := &fakeLive{results: map[string]string{
			"initialize": `{"serverInfo":{"name":"s","version":"1"},"_meta":{"t":2}}`, "tools/list": toolsV1,
			"tools/call add": `{"content":[{"type":"text","text":"1"}]}`, "tools/call gone": `{"content":[]}`, "ping": `{}`,
		}}
		got, err := Drift(t.Context(), rec, live)
		if err != nil || len(got) != 0 {
			t.Errorf("Drift = %v, %v; want no changes", got, err)
		}
		if diff := cmp.Diff([]string{"notifications/initialized"}, live.notified); diff != "" {
			t.Errorf("notified (-want +got):\n%s", diff)
		}
	})
	t.Run("drifted", func(t *testing.T) {
		live := &fakeLive{results: map[string]string{
			"initialize": `{"serverInfo":{"name":"s","version":"2"}}`, "tools/list": toolsV2,
			"tools/call add": `{"content":[{"type":"text","text":"2"}]}`, "ping": `{}`,
		}, fail: map[string]error{"tools/call gone": errors.New("EOF")}}
		got, err := Drift(t.Context(), rec, live)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"BREAKING: interaction 5: tools/call gone: live server: tools/call: EOF",
			`changed: tool add: the description changed from "adds" to "sums"`,
			`BREAKING: tool add: argument "a" changed type from "number" to "string"`,
			`BREAKING: tool add: argument "b" is now required (new, of type "number")`,
			"BREAKING: tool gone was removed",
			"changed: tool new was added",
			`changed: interaction 1: initialize: the server was "s 1", is now "s 2"`,
			`changed: interaction 4: tools/call add {"a":1}: content[0].text was "1", now "2"`,
		}
		if diff := cmp.Diff(want, strs(got)); diff != "" {
			t.Errorf("Drift (-want +got):\n%s", diff)
		}
	})
	t.Run("fail alike", func(t *testing.T) {
		refused := errors.New("HTTP 400: unsupported protocol version")
		live := &fakeLive{fail: map[string]error{"initialize": refused, "tools/list": refused, "tools/call add": refused, "tools/call gone": refused, "ping": refused}}
		got, err := Drift(t.Context(), rec, live)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"BREAKING: interactions 1, 3, 4, 5 and 6 (initialize, tools/list, tools/call, ping): now fail alike: live server: HTTP 400: unsupported protocol version"}
		if diff := cmp.Diff(want, strs(got)); diff != "" {
			t.Errorf("Drift (-want +got):\n%s", diff)
		}
	})
}

func strs(cs Changes) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestChangeString(t *testing.T) {
	for _, tt := range []struct {
		c    Change
		want string
	}{
		{Change{Breaking: true, Text: "x"}, "BREAKING: x"},
		{Change{Text: "x"}, "changed: x"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}
