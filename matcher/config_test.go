package matcher

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

func TestParseConfig(t *testing.T) {
	text := `{
	  "ignore": ["arguments.timestamp", "_meta.com\\.example\\.nonce"],
	  "subset": true,
	  "regex": {"arguments.location": "^New"},
	  "type": {"arguments.n": "number"},
	  "unordered": "arguments.tags",
	  "tools": {"get_weather": {"ignore": ["arguments.units"]}}
	}`
	got, err := ParseConfig(json.RawMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Ignore:    []string{"arguments.timestamp", `_meta.com\.example\.nonce`},
		Subset:    []string{""},
		Regex:     map[string]string{"arguments.location": "^New"},
		Type:      map[string]string{"arguments.n": "number"},
		Unordered: []string{"arguments.tags"},
		Tools:     map[string]*Config{"get_weather": {Ignore: []string{"arguments.units"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The declarative form round-trips.
	b, _ := json.Marshal(got)
	again, err := ParseConfig(b)
	if err != nil {
		t.Fatalf("reparse %s: %v", b, err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("round trip of %s (-first +second):\n%s", b, diff)
	}
	for _, empty := range []string{``, `null`, ` {} `} {
		if c, err := ParseConfig(json.RawMessage(empty)); err != nil || !c.Empty() {
			t.Errorf("ParseConfig(%q) = %+v, %v", empty, c, err)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		text  string
		at    string // the text at the error's offset
		where string
		msg   string
	}{
		{`{"ignroe": ["a"]}`, `"ignroe"`, "ignroe", `unknown member "ignroe"`},
		{`{"ignore": ["a", "b..c"]}`, `"b..c"`, "ignore[1]", "empty key"},
		{`{"ignore": ["a", 5]}`, `5]`, "ignore[1]", "want a path string, got a number"},
		{`{"ignore": {"a": 1}}`, `{"a"`, "ignore", "want an array of paths"},
		{`{"regex": {"arguments.city": "(unclosed"}}`, `"(unclosed"`, `regex["arguments.city"]`, "bad regular expression"},
		{`{"regex": {"a|b": "x"}}`, `"a|b"`, `regex["a|b"]`, "pipes are not supported"},
		{`{"type": {"a": "integer"}}`, `"integer"`, `type["a"]`, `unknown type "integer"`},
		{`{"tools": {"t": {"ignore": ["#(x)"]}}}`, `"#(x)"`, "tools.t.ignore[0]", "queries"},
		{`{"tools": {"t": {"nope": 1}}}`, `"nope"`, "tools.t.nope", "unknown member"},
		{`{"ignore": ["a"], "ignore": ["b"]}`, `"ignore": ["b"]`, "ignore", "given twice"},
		{`{"ignore": ["a.@reverse"]}`, `"a.@reverse"`, "ignore[0]", "modifiers"},
		{`{"ignore": ["a\\"]}`, `"a\\"`, "ignore[0]", "backslash"},
		{`["a"]`, `["a"]`, "", "want a JSON object"},
		{`{"ignore": ["a"]`, ``, "", "unexpected end"},
		{`{"ignore": ["a"]} x`, `x`, "", "after the configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := ParseConfig(json.RawMessage(tt.text))
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if at := tt.text[ce.Offset:]; !strings.HasPrefix(at, tt.at) {
				t.Errorf("offset %d points at %q, want %q", ce.Offset, at, tt.at)
			}
			if ce.Where != tt.where || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q (where %q), want %q in %q", err, ce.Where, tt.msg, tt.where)
			}
		})
	}
}

func TestConfigCheckAndMerge(t *testing.T) {
	if err := (&Config{Tools: map[string]*Config{"t": {Regex: map[string]string{"a": "("}}}}).Check(); err == nil || !strings.Contains(err.Error(), `tools.t.regex["a"]: bad regular expression`) {
		t.Errorf("Check: %v", err)
	}
	if _, err := WithConfig(nil, &Config{Ignore: []string{""}}); err == nil {
		t.Error("WithConfig accepted an empty ignore path")
	}
	a := &Config{Ignore: []string{"x"}, Regex: map[string]string{"p": "a"}, Tools: map[string]*Config{"t": {Ignore: []string{"y"}}}}
	b := &Config{Ignore: []string{"x", "z"}, Regex: map[string]string{"p": "b"}, Tools: map[string]*Config{"t": {Type: map[string]string{"q": "any"}}}}
	got := Merge(a, b)
	want := &Config{Ignore: []string{"x", "z"}, Regex: map[string]string{"p": "b"}, Tools: map[string]*Config{"t": {Ignore: []string{"y"}, Type: map[string]string{"q": "any"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if a.Regex["p"] != "a" || len(a.Ignore) != 1 {
		t.Error("Merge changed its input")
	}
	if diff := cmp.Diff(&Config{Ignore: []string{"x", "z", "y"}, Regex: map[string]string{"p": "b"}, Type: map[string]string{"q": "any"}}, got.ForTool("t")); diff != "" {
		t.Errorf("ForTool (-want +got):\n%s", diff)
	}
}

func TestCheckCassette(t *testing.T) {
	data := []byte(`{
  "version": 1,
  "meta": {},
  "match": {"ignore": ["arguments.ts"]},
  "interactions": [
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 2, "method": "ping"},
     "match": {"regex": {"arguments.city": "[a-"}}}
  ]
}
`)
	if _, err := cassettes.Parse("c.json", data); err != nil {
		t.Fatal(err)
	}
	err := CheckCassette("c.json", data)
	var pe *cassettes.PosError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *cassettes.PosError", err)
	}
	if pe.Line != 8 || pe.Column != 44 || !strings.Contains(err.Error(), `interaction 2: "match": regex["arguments.city"]: bad regular expression`) {
		t.Errorf("error at line %d, column %d: %v", pe.Line, pe.Column, err)
	}
	if err := CheckCassette("c.json", []byte(strings.Replace(string(data), "[a-", "[a-z]", 1))); err != nil {
		t.Errorf("a good cassette: %v", err)
	}
	top := strings.Replace(string(data), `"ignore": ["arguments.ts"]`, `"ignore": ["arguments..ts"]`, 1)
	if err := CheckCassette("c.json", []byte(top)); err == nil || !strings.Contains(err.Error(), `line 4, column 24: "match": ignore[0]`) {
		t.Errorf("top-level error: %v", err)
	}
}

func FuzzMatchConfig(f *testing.F) {
	for _, s := range []string{
		`{"ignore":["arguments.ts"],"tools":{"get_weather":{"regex":{"arguments.location":"^New"}}}}`,
		`{"subset":true,"type":{"a.#.b":"number"},"unordered":["x\\.y"]}`,
		`{"regex":{"a":"("}}`, `{"ignore":["a..b"]}`, `[]`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the %d bytes", ce.Offset, len(data))
			}
			return
		}
		m, err := WithConfig(nil, c)
		if err != nil {
			t.Fatalf("a parsed config does not build: %v", err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseConfig(b); err != nil {
			t.Fatalf("%s does not parse again: %v", b, err)
		}
		// Matching never panics, and the index never separates a match.
		rec := call(`{"ts":1,"a":[{"b":2}],"tags":["x","y"],"location":"New York"}`)
		live := call(`{"ts":2,"a":[{"b":3,"c":1}],"tags":["y","x"],"location":"Newark","more":true}`)
		for _, pair := range [][2]Request{{rec, rec}, {rec, live}, {live, rec}} {
			res := m.Match(pair[0], pair[1])
			k0, ok := m.(Indexer).IndexKey(pair[0])
			k1, _ := m.(Indexer).IndexKey(pair[1])
			if res.Match && ok && k0 != k1 {
				t.Fatalf("under %s a match has different index keys", b)
			}
		}
	})
}
