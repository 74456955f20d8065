package matcher

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func call(args string) Request {
	return req("tools/call", `{"name":"get_weather","arguments":`+args+`}`)
}

func mustConfig(t *testing.T, base Matcher, text string) Matcher {
	t.Helper()
	cfg, err := ParseConfig(json.RawMessage(text))
	if err != nil {
		t.Fatalf("ParseConfig(%s): %v", text, err)
	}
	m, err := WithConfig(base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRules(t *testing.T) {
	tests := []struct {
		name           string
		config         string
		recorded, live Request
		match, exact   bool
		diff           string // a Difference that a miss must report
	}{
		{"empty config is the default", `{}`, call(`{"a":1}`), call(`{"a":1.0}`), true, true, ""},
		{"empty config misses", `{}`, call(`{"a":1}`), call(`{"a":2}`), false, false, "arguments.a: recorded 1, live 2"},
		{"ignore", `{"ignore":["arguments.ts"]}`, call(`{"city":"Paris","ts":1}`), call(`{"city":"Paris","ts":2}`), true, false, ""},
		{"ignore absent on one side", `{"ignore":["arguments.ts"]}`, call(`{"city":"Paris"}`), call(`{"city":"Paris","ts":2}`), true, false, ""},
		{"ignore leaves the rest", `{"ignore":["arguments.ts"]}`, call(`{"city":"Paris","ts":1}`), call(`{"city":"Rome","ts":2}`), false, false, `arguments.city: recorded "Paris", live "Rome"`},
		{"ignore matching exactly is exact", `{"ignore":["arguments.ts"]}`, call(`{"ts":1}`), call(`{"ts":1}`), true, true, ""},
		{"ignore every element", `{"ignore":["arguments.items.#.id"]}`, call(`{"items":[{"id":1,"v":"a"},{"id":2,"v":"b"}]}`), call(`{"items":[{"id":7,"v":"a"},{"id":8,"v":"b"}]}`), true, false, ""},
		{"ignore wildcard", `{"ignore":["arguments.x-*"]}`, call(`{"x-a":1,"x-b":2,"y":3}`), call(`{"x-a":5,"y":3}`), true, false, ""},
		{"ignore dotted meta key", `{"ignore":["_meta.com\\.example\\.nonce"]}`, req("resources/read", `{"uri":"a","_meta":{"com.example.nonce":"1","keep":1}}`), req("resources/read", `{"uri":"a","_meta":{"com.example.nonce":"2","keep":1}}`), true, false, ""},
		{"dotted meta key not ignored", `{"ignore":["_meta.com.example.nonce"]}`, req("resources/read", `{"uri":"a","_meta":{"com.example.nonce":"1"}}`), req("resources/read", `{"uri":"a","_meta":{"com.example.nonce":"2"}}`), false, false, `_meta.com\.example\.nonce: recorded "1", live "2"`},
		{"regex", `{"regex":{"arguments.location":"^New "}}`, call(`{"location":"New York"}`), call(`{"location":"New Orleans"}`), true, false, ""},
		{"regex miss", `{"regex":{"arguments.location":"^New "}}`, call(`{"location":"New York"}`), call(`{"location":"Boston"}`), false, false, `arguments.location: live "Boston" does not match regex ^New `},
		{"regex absent", `{"regex":{"arguments.location":"^New "}}`, call(`{"location":"New York"}`), call(`{}`), false, false, `arguments.location: live has none, want regex ^New `},
		{"regex on a number", `{"regex":{"arguments.n":"^4[0-9]$"}}`, call(`{"n":41}`), call(`{"n":42}`), true, false, ""},
		{"type string", `{"type":{"arguments.nonce":"string"}}`, call(`{"nonce":"a"}`), call(`{"nonce":"b"}`), true, false, ""},
		{"type string miss", `{"type":{"arguments.nonce":"string"}}`, call(`{"nonce":"a"}`), call(`{"nonce":5}`), false, false, `arguments.nonce: live 5 does not match type string`},
		{"type number", `{"type":{"arguments.ts":"number"}}`, call(`{"ts":1}`), call(`{"ts":1.5e9}`), true, false, ""},
		{"type any needs presence", `{"type":{"arguments.ts":"any"}}`, call(`{"ts":1}`), call(`{}`), false, false, "arguments.ts: live has none, want type any"},
		{"type any", `{"type":{"arguments.ts":"any"}}`, call(`{"ts":1}`), call(`{"ts":null}`), true, false, ""},
		{"subset", `{"subset":["arguments"]}`, call(`{"city":"Paris"}`), call(`{"city":"Paris","units":"metric","deep":{"x":1}}`), true, false, ""},
		{"subset deep", `{"subset":["arguments"]}`, call(`{"o":{"a":1}}`), call(`{"o":{"a":1,"b":2}}`), true, false, ""},
		{"subset needs what was recorded", `{"subset":["arguments"]}`, call(`{"city":"Paris","units":"metric"}`), call(`{"city":"Paris"}`), false, false, `arguments.units: recorded "metric", live has none`},
		{"subset true", `{"subset":true}`, call(`{"city":"Paris"}`), call(`{"city":"Paris","more":1}`), true, false, ""},
		{"unordered", `{"unordered":["arguments.tags"]}`, call(`{"tags":["a","b",{"c":1}]}`), call(`{"tags":[{"c":1.0},"b","a"]}`), true, false, ""},
		{"unordered is a multiset", `{"unordered":["arguments.tags"]}`, call(`{"tags":["a","a","b"]}`), call(`{"tags":["a","b","b"]}`), false, false, ""},
		{"ordered by default", `{}`, call(`{"tags":["a","b"]}`), call(`{"tags":["b","a"]}`), false, false, `arguments.tags.0: recorded "a", live "b"`},
		{"per tool", `{"tools":{"get_weather":{"ignore":["arguments.ts"]}}}`, call(`{"ts":1}`), call(`{"ts":2}`), true, false, ""},
		{"per tool applies to its tool only", `{"tools":{"other":{"ignore":["arguments.ts"]}}}`, call(`{"ts":1}`), call(`{"ts":2}`), false, false, "arguments.ts: recorded 1, live 2"},
		{"placeholder number", `{}`, call(`{"ts":"{{any number}}"}`), call(`{"ts":17}`), true, false, ""},
		{"placeholder number miss", `{}`, call(`{"ts":"{{any number}}"}`), call(`{"ts":"x"}`), false, false, `arguments.ts: recorded "{{any number}}", live "x"`},
		{"placeholder string", `{}`, call(`{"s":"{{any string}}"}`), call(`{"s":"x"}`), true, false, ""},
		{"placeholder any", `{}`, call(`{"s":"{{any}}"}`), call(`{"s":[1]}`), true, false, ""},
		{"placeholder any needs presence", `{}`, call(`{"s":"{{any}}"}`), call(`{}`), false, false, ""},
		{"placeholder in an array", `{}`, call(`{"a":[1,"{{any boolean}}"]}`), call(`{"a":[1,true]}`), true, false, ""},
		{"live placeholder text is a plain value", `{}`, call(`{"s":"x"}`), call(`{"s":"{{any string}}"}`), false, false, ""},
		{"method differs", `{"ignore":["cursor"]}`, req("tools/list", `{}`), req("prompts/list", `{}`), false, false, `method: recorded "tools/list", live "prompts/list"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustConfig(t, nil, tt.config)
			recIn, liveIn := string(tt.recorded.Params), string(tt.live.Params)
			r := m.Match(tt.recorded, tt.live)
			if r.Match != tt.match || (r.Match && r.Exact != tt.exact) {
				t.Fatalf("Match, Exact = %v, %v; want %v, %v (%v)", r.Match, r.Exact, tt.match, tt.exact, r.Differences)
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
			// The index key must never separate a match.
			ix := m.(Indexer)
			rk, ok := ix.IndexKey(tt.recorded)
			lk, _ := ix.IndexKey(tt.live)
			if r.Match && ok && rk != lk {
				t.Errorf("a match with different index keys:\n%q\n%q", rk, lk)
			}
			if strings.Contains(recIn, "{{any") && ok {
				t.Errorf("a recorded request with placeholders was keyed")
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	mt := MethodAndTool()
	if r := mt.Match(call(`{"a":1}`), call(`{"b":2}`)); !r.Match {
		t.Errorf("MethodAndTool compared arguments: %v", r.Differences)
	}
	if r := mt.Match(call(`{}`), req("tools/call", `{"name":"other"}`)); r.Match || r.Differences[0].String() != `name: recorded "get_weather", live "other"` {
		t.Errorf("MethodAndTool, another tool: %+v", r)
	}
	if mt.(Keyer).Key(call(`{"a":1}`)) != mt.(Keyer).Key(call(`{}`)) {
		t.Error("MethodAndTool keys differ for one tool")
	}
	noB := Func(func(_, live Request) Result {
		if strings.Contains(string(live.Params), `"b"`) {
			return Result{Differences: []Difference{{Path: "arguments.b", Live: "present", Rule: "no b"}}}
		}
		return Result{Match: true}
	})
	a := All(Default(), noB)
	if r := a.Match(call(`{"a":1}`), call(`{"a":1}`)); !r.Match || r.Exact {
		t.Errorf("All: %+v (want a match, not exact: the Func is not exact)", r)
	}
	if r := a.Match(call(`{"b":1}`), call(`{"b":1}`)); r.Match {
		t.Error("All matched though one matcher did not")
	}
	if k, ok := a.(Indexer).IndexKey(call(`{}`)); !ok || k != Default().(Keyer).Key(call(`{}`)) {
		t.Error("All does not key by its first Keyer")
	}
	// Rules over a custom base: the base sees the loosened requests.
	var seen string
	spy := Func(func(rec, live Request) Result {
		if seen == "" {
			seen = string(live.Params)
		}
		return Result{Match: true, Exact: true}
	})
	m := mustConfig(t, spy, `{"ignore":["arguments.ts"]}`)
	m.Match(call(`{"ts":1}`), call(`{"ts":2,"x":1}`))
	if strings.Contains(seen, `"ts"`) || !strings.Contains(seen, `"x":1`) {
		t.Errorf("the base saw %s", seen)
	}
	if _, ok := m.(Indexer).IndexKey(call(`{}`)); ok {
		t.Error("rules over a base that cannot key claimed a key")
	}
}

// TestPathsAgreeWithGJSON: the places a path reaches are those gjson finds
// (a wildcard reaches every matching key; gjson's Get returns the first).
func TestPathsAgreeWithGJSON(t *testing.T) {
	doc := `{"a":{"b.c":1,"d":[{"e":1},{"e":2}],"x-1":"p","x-2":"q"},"m":{"k@v":3,"h#":4,"w*":5}}`
	tree, _ := Decode(json.RawMessage(doc))
	for _, p := range []string{`a.b\.c`, `a.d.1.e`, `a.d.#.e`, `a.x-*`, `a.x-?`, `m.k@v`, `m.h\#`, `m.w\*`, `a.d.0`, `missing.x`} {
		segs, err := parsePath(p)
		if err != nil {
			t.Errorf("parsePath(%q): %v", p, err)
			continue
		}
		var got []string
		for _, f := range lookup(tree, segs) {
			got = append(got, compact(f.val))
		}
		g := gjson.Get(doc, p)
		var want []string
		switch {
		case !g.Exists():
		case strings.Contains(p, "#"):
			for _, e := range g.Array() {
				want = append(want, e.Raw)
			}
		default:
			want = []string{g.Raw}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") && !strings.ContainsAny(p[len(p)-1:], "*?") {
			t.Errorf("%s: got %v, gjson %v", p, got, want)
		}
		if strings.ContainsAny(p[len(p)-1:], "*?") && (len(got) == 0 || got[0] != g.Raw) {
			t.Errorf("%s: got %v, gjson's first %v", p, got, g.Raw)
		}
	}
}
