package matcher

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// plainNames are the member names that the random params and paths of
// these tests are made of: few, so that paths meet members.
var plainNames = []string{"a", "b", "ts", "_meta", "name", "arguments", "progressToken", "x.y", "é"}

// randomValue writes a random JSON value of at most depth levels.
func randomValue(r *rand.Rand, b *strings.Builder, depth int) {
	k := r.IntN(9)
	if depth <= 0 {
		k = 5 + r.IntN(4)
	}
	switch k {
	case 0, 1, 2: // an object, now and then with a duplicate or an empty one
		b.WriteByte('{')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(plainNames[r.IntN(len(plainNames))])
			if r.IntN(8) == 0 { // an escaped name
				name = []byte(`"\u0061"`)
			}
			b.Write(name)
			b.WriteByte(':')
			randomValue(r, b, depth-1)
		}
		b.WriteByte('}')
	case 3, 4:
		b.WriteByte('[')
		for i := range r.IntN(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomValue(r, b, depth-1)
		}
		b.WriteByte(']')
	case 5:
		b.WriteString([]string{"1", "1.0", "1e2", "-0", "100", "2.50"}[r.IntN(6)])
	case 6:
		b.WriteString([]string{`"s"`, `"<&>"`, `"\u00e9\n"`, `"{{any}}x"`, `""`}[r.IntN(5)])
	case 7:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	default:
		b.WriteString("{}")
	}
}

// randomPaths returns up to three paths of one to three plain names.
func randomPaths(r *rand.Rand) []string {
	var out []string
	for range r.IntN(4) {
		var segs []string
		for range 1 + r.IntN(3) {
			segs = append(segs, strings.ReplaceAll(plainNames[r.IntN(len(plainNames))], ".", `\.`))
		}
		out = append(out, strings.Join(segs, "."))
	}
	return out
}

// checkPlainPaths holds the key written from the raw params with the
// paths of cfg left out to the key of the params decoded and pruned by the
// config's rules, for params and method.
func checkPlainPaths(t *testing.T, cfg *Config, method, params string) {
	t.Helper()
	m, err := WithConfig(Default(), cfg)
	if err != nil {
		t.Fatalf("config %+v: %v", cfg, err)
	}
	rs := m.(*rules)
	req := Request{Method: method, Params: json.RawMessage(params)}
	c := rs.rulesFor(req)
	if c.plain == nil {
		t.Fatalf("config %+v: its paths are plain, yet no pruning", cfg)
	}
	want, wok := rs.decodedKey(nil, req, c, false, false)
	got, gok := rs.appendIndexKey(nil, req, false)
	valid, _ := rs.appendIndexKey(nil, req, true)
	if string(got) != string(want) || gok != wok || string(valid) != string(want) {
		t.Fatalf("config %+v, %s %s:\nfrom the raw params %q (%v; checked %q)\ndecoded             %q (%v)", cfg, method, params, got, gok, valid, want, wok)
	}
}

// TestPlainPathsKeyAsDecoded: the index key of a config whose rules are on
// paths of plain names, written from the raw params, is the key of the
// params decoded with those paths taken out, for 20,000 random params and
// configs (ignore, regex and type rules, for every tool and for one).
func TestPlainPathsKeyAsDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var b strings.Builder
		randomValue(r, &b, 4)
		params := b.String()
		if r.IntN(4) > 0 { // mostly objects, as params are
			var o strings.Builder
			o.WriteString(`{"name":"t","arguments":`)
			o.WriteString(params)
			o.WriteString(`,"a":`)
			randomValue(r, &o, 3)
			o.WriteString(`,"_meta":{"progressToken":1,"ts":2}}`)
			params = o.String()
		}
		cfg := &Config{Ignore: randomPaths(r)}
		if r.IntN(3) == 0 {
			cfg.Regex = map[string]string{}
			for _, p := range randomPaths(r) {
				cfg.Regex[p] = "^x"
			}
			cfg.Type = map[string]string{}
			for _, p := range randomPaths(r) {
				cfg.Type[p] = "any"
			}
		}
		if r.IntN(4) == 0 {
			cfg = &Config{Tools: map[string]*Config{"t": cfg}}
		}
		method := []string{"tools/call", "resources/read", "tools/list", "x/y"}[i%4]
		checkPlainPaths(t, cfg, method, params)
	}
}

// FuzzPlainPathsKey is TestPlainPathsKeyAsDecoded on params the fuzzer
// makes, with an ignore path it makes of plain names.
func FuzzPlainPathsKey(f *testing.F) {
	f.Add(`{"name":"t","arguments":{"ts":1,"a":{"b":2}}}`, "arguments.ts", "tools/call")
	f.Add(`{"uri":"u","_meta":{"progressToken":1,"a":{}}}`, "_meta.a", "resources/read")
	f.Add(`{"a":[{"b":1}],"b":{"a":{"a":1}}}`, "b.a.a", "x/y")
	f.Fuzz(func(t *testing.T, params, path, method string) {
		if !json.Valid([]byte(params)) || mayHavePlaceholders(json.RawMessage(params)) {
			return
		}
		segs, err := parsePath(path)
		if err != nil {
			return
		}
		for _, s := range segs {
			if s.all || s.glob || isIndex(s.key) {
				return
			}
		}
		checkPlainPaths(t, &Config{Ignore: []string{path}}, method, params)
	})
}

// TestPathsThatAreNotPlain: a wildcard, "#" or an index leaves the key to
// the decoded params.
func TestPathsThatAreNotPlain(t *testing.T) {
	for _, p := range []string{"a.*", "a.#.b", "a.0", "x?", "a.#"} {
		if c := compile(&Config{Ignore: []string{"b", p}}); c.plain != nil {
			t.Errorf("ignore %q: pruned from the raw params", p)
		}
	}
	if c := compile(&Config{Ignore: []string{"b"}, Unordered: []string{"c"}}); c.plain != nil {
		t.Error("an unordered rule: pruned from the raw params")
	}
	if c := compile(&Config{Ignore: []string{"b", `a\.b.c`}}); c.plain == nil {
		t.Error("plain names: not pruned from the raw params")
	}
}

// objectPaths returns the paths of plain names to every member of the
// JSON value raw that is inside objects only, escaped as match paths.
func objectPaths(raw []byte, prefix string, out *[]string) {
	jsonrpc.EachMember(raw, func(key string, value []byte) error {
		p := strings.NewReplacer(`\`, `\\`, ".", `\.`, "*", `\*`, "?", `\?`, "#", `\#`, "|", `\|`, "@", `\@`).Replace(key)
		if prefix != "" {
			p = prefix + "." + p
		}
		if key != "" && !isIndex(key) {
			*out = append(*out, p)
			objectPaths(value, p, out)
		}
		return nil
	})
}

// TestPlainRulesMatchAsDecoded: Match of rules on paths of plain names,
// read from the raw params, says what the decoded params say (match and
// exact), for 20,000 random recorded requests, live ones that differ from
// them at some of their members, and rules on some of those members.
func TestPlainRulesMatchAsDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	matched, checked := 0, 0
	for range 20000 {
		var b strings.Builder
		b.WriteString(`{"name":"t","arguments":`)
		randomValue(r, &b, 4)
		b.WriteString(`,"_meta":{"progressToken":1}}`)
		recorded := []byte(b.String())
		var paths []string
		objectPaths(recorded, "", &paths)
		live := recorded
		pick := func() string { return paths[r.IntN(len(paths))] }
		for range r.IntN(3) { // live differs at some members
			segs, _ := parsePath(pick())
			keys := make([]string, len(segs))
			for k, s := range segs {
				keys[k] = s.key
			}
			var v strings.Builder
			randomValue(r, &v, 1)
			if changed, err := jsonrpc.SetMember(live, json.RawMessage(v.String()), keys...); err == nil {
				live = changed
			}
		}
		cfg := &Config{Ignore: []string{pick()}, Regex: map[string]string{}, Type: map[string]string{}}
		if r.IntN(2) == 0 {
			cfg.Regex[pick()] = []string{"^s$", "^1", "e", `^\{`}[r.IntN(4)]
		}
		if r.IntN(2) == 0 {
			cfg.Type[pick()] = []string{"string", "number", "object", "array", "any", "null", "boolean"}[r.IntN(7)]
		}
		if r.IntN(3) == 0 {
			cfg.Ignore = nil
		}
		m, err := WithConfig(Default(), cfg)
		if err != nil {
			t.Fatalf("config %+v: %v", cfg, err)
		}
		rs := m.(*rules)
		rec, lv := Request{Method: "tools/call", Params: recorded}, Request{Method: "tools/call", Params: live}
		c := rs.rulesFor(rec)
		if c.plain == nil || c.nested {
			continue
		}
		checked++
		got, want := rs.Match(rec, lv), rs.decodedMatch(c, rec, lv)
		if got.Match != want.Match || got.Exact != want.Exact {
			t.Fatalf("config %+v\nrecorded %s\nlive     %s\nMatch %v exact %v; decoded: %v exact %v", cfg, recorded, live, got.Match, got.Exact, want.Match, want.Exact)
		}
		if got.Match {
			matched++
		}
	}
	if matched < checked/10 || checked < 5000 {
		t.Errorf("%d of %d requests matched, of 20,000: too few to tell", matched, checked)
	}
	t.Logf("%d of %d checked requests matched", matched, checked)
}
