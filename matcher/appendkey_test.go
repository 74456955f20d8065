package matcher

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestAppendIndexKeyAgrees: AppendIndexKey writes, after what dst holds,
// exactly the key that IndexKey or Key returns, with the same ok, for every
// kind of built-in matcher, and for a user's Keyer and a matcher that keys
// nothing.
func TestAppendIndexKeyAgrees(t *testing.T) {
	configs := []string{
		`{}`,
		`{"ignore":["arguments.ts"]}`,
		`{"tools":{"get_weather":{"regex":{"arguments.location":"^New"}},"a\"b":{"ignore":["arguments.x"]}}}`,
		`{"subset":true,"unordered":["arguments.tags"]}`,
	}
	matchers := map[string]Matcher{
		"default":       Default(),
		"all":           All(MethodAndTool(), Default()),
		"user keyer":    userKeyer{},
		"keys nothing":  MethodAndTool(),
		"all, no keyer": All(MethodAndTool()),
	}
	for _, c := range configs {
		cfg, err := ParseConfig(json.RawMessage(c))
		if err != nil {
			t.Fatal(err)
		}
		m, err := WithConfig(nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		matchers["rules "+c] = m
	}
	requests := []Request{
		{"tools/call", json.RawMessage(`{"name":"get_weather","arguments":{"location":"New York","ts":1767225600,"n":-0,"f":1.50,"e":1e2}}`)},
		{"tools/call", json.RawMessage(`{"name":"a\"b","arguments":{"x":1,"y":"\u0041"}}`)},
		{"tools/call", json.RawMessage(`{"name":"get_weather","arguments":{"location":"{{any string}}"}}`)},
		{"tools/call", json.RawMessage(`{"arguments":{"tags":["b","a"]}}`)},
		{"tools/call", nil},
		{"resources/read", json.RawMessage(`{"uri":"file:///x","_meta":{"progressToken":7}}`)},
		{"initialize", json.RawMessage(`{"protocolVersion":"2025-11-25"}`)},
		{"x/y", json.RawMessage(`[1,2`)},
	}
	for name, m := range matchers {
		for _, r := range requests {
			var want string
			var wantOK bool
			switch x := m.(type) {
			case Indexer:
				want, wantOK = x.IndexKey(r)
			case Keyer:
				want, wantOK = x.Key(r), true
			}
			got, ok := AppendIndexKey([]byte("prefix"), m, r)
			if string(got) != "prefix"+want || ok != wantOK {
				t.Errorf("%s, %s %s: AppendIndexKey = %q, %v; want %q, %v", name, r.Method, r.Params, got, ok, "prefix"+want, wantOK)
			}
		}
	}
}

type userKeyer struct{}

func (userKeyer) Match(a, b Request) Result { return Result{Match: a.Method == b.Method} }
func (userKeyer) Key(r Request) string      { return fmt.Sprint(len(r.Params)) }

// TestAppendIndexKeyAllocates: with a reused buffer, keying a tools/call
// under the default matcher, alone or under a configuration with no rule for
// the call, allocates nothing: the replay engine's lookup depends on it.
func TestAppendIndexKeyAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	cfg, err := ParseConfig(json.RawMessage(`{"tools":{"other":{"ignore":["arguments.ts"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ruled, err := WithConfig(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := Request{"tools/call", json.RawMessage(`{"name":"get_weather","arguments":{"units":"metric","location":"city 7","ts":1767225600}}`)}
	for name, m := range map[string]Matcher{"default": Default(), "rules": ruled} {
		buf := make([]byte, 0, 256)
		AppendIndexKey(buf, m, r) // warm the scratch pool
		if n := testing.AllocsPerRun(100, func() { AppendIndexKey(buf[:0], m, r) }); n != 0 {
			t.Errorf("%s: %.1f allocations a key, want 0", name, n)
		}
	}
}
