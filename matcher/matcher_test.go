package matcher

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func req(method, params string) Request {
	return Request{Method: method, Params: json.RawMessage(params)}
}

func TestDefault(t *testing.T) {
	tests := []struct {
		name           string
		recorded, live Request
		match          bool
		diff           string // a Difference that must be reported on a miss
	}{
		{"key order and numbers", req("tools/call", `{"name":"a","arguments":{"x":1,"y":[1.0,2e0]}}`), req("tools/call", `{"arguments":{"y":[1,2],"x":1.00},"name":"a"}`), true, ""},
		{"volatile meta", req("tools/call", `{"name":"a","arguments":{},"_meta":{"progressToken":1}}`), req("tools/call", `{"name":"a","arguments":{},"_meta":{"progressToken":2,"io.modelcontextprotocol/clientInfo":{"name":"x"}}}`), true, ""},
		{"other argument", req("tools/call", `{"name":"a","arguments":{"city":"Paris"}}`), req("tools/call", `{"name":"a","arguments":{"city":"Rome"}}`), false, `arguments.city: recorded "Paris", live "Rome"`},
		{"extra argument", req("tools/call", `{"name":"a","arguments":{}}`), req("tools/call", `{"name":"a","arguments":{"t":5}}`), false, `arguments.t: not recorded, live has 5`},
		{"other tool", req("tools/call", `{"name":"a"}`), req("tools/call", `{"name":"b"}`), false, `name: recorded "a", live "b"`},
		{"handshake", req("initialize", `{"clientInfo":{"name":"x"}}`), req("initialize", `{"clientInfo":{"name":"y"},"capabilities":{"roots":{}}}`), true, ""},
		{"cursor", req("tools/list", `{"cursor":"abc"}`), req("tools/list", `{"cursor":"abd","_meta":{"traceparent":"t"}}`), false, `cursor: recorded "abc", live "abd"`},
		{"no params", req("tools/list", ``), req("tools/list", `{}`), true, ""},
		{"other method", req("tools/list", `{}`), req("prompts/list", `{}`), false, `method: recorded "tools/list", live "prompts/list"`},
		{"dotted meta key", req("resources/read", `{"uri":"a","_meta":{"a.b":1}}`), req("resources/read", `{"uri":"a","_meta":{"a.b":2}}`), false, `_meta.a\.b: recorded 1, live 2`},
	}
	m := Default()
	k := m.(Keyer)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recIn, liveIn := string(tt.recorded.Params), string(tt.live.Params)
			r := m.Match(tt.recorded, tt.live)
			if r.Match != tt.match {
				t.Fatalf("Match = %v, want %v (%v)", r.Match, tt.match, r.Differences)
			}
			if (k.Key(tt.recorded) == k.Key(tt.live)) != tt.match {
				t.Errorf("Key equality disagrees with Match")
			}
			if string(tt.recorded.Params) != recIn || string(tt.live.Params) != liveIn {
				t.Errorf("the matcher changed its inputs")
			}
			if tt.diff != "" {
				var got []string
				for _, d := range r.Differences {
					got = append(got, d.String())
				}
				if !strings.Contains(strings.Join(got, "\n"), tt.diff) {
					t.Errorf("differences %q lack %q", got, tt.diff)
				}
				if r.Diff == "" && tt.recorded.Method == tt.live.Method {
					t.Error("no cmp diff for a miss")
				}
			}
		})
	}
}

func TestCanonicalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"1": "1", "1.0": "1", "1e2": "100", "100": "100", "-0.50": "-0.5", "0": "0", "-0": "0", "0.000": "0",
		"1.5E-3": "0.0015", "12345678901234567890": "12345678901234567890", "1e400": "1e400", "2.50e1": "25",
	} {
		if got := canonicalNumber(in); got != want {
			t.Errorf("canonicalNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

func ExampleDefault() {
	m := Default()
	recorded := Request{Method: "tools/call", Params: json.RawMessage(`{"name":"get_weather","arguments":{"location":"New York"}}`)}
	live := Request{Method: "tools/call", Params: json.RawMessage(`{"name":"get_weather","arguments":{"location":"Boston"}}`)}
	r := m.Match(recorded, live)
	fmt.Println(r.Match)
	for _, d := range r.Differences {
		fmt.Println(d)
	}
	// Output:
	// false
	// arguments.location: recorded "New York", live "Boston"
}
