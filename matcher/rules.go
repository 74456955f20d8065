package matcher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Indexer is implemented by matchers that can narrow the recorded requests
// worth trying for a live one to those that share a key with it: whenever
// Match(recorded, live).Match, then IndexKey(recorded) == IndexKey(live).
// ok is false for a recorded request that cannot be keyed (one holding
// placeholders, say): an engine must try it against every live request of
// its method and tool. Unlike Keyer, equal keys do not promise a match: the
// engine still calls Match.
type Indexer interface {
	IndexKey(r Request) (key string, ok bool)
}

// Placeholders are strings that, as a recorded value, match any live value
// of a type: "{{any string}}", "{{any number}}", "{{any boolean}}",
// "{{any object}}", "{{any array}}", and "{{any}}" (any value, but present).
// They work under every matcher that WithConfig builds, which is what the
// replay engine uses, so a hand-edited cassette can say
// "arguments": {"timestamp": "{{any number}}"}.
func placeholder(s string) (typ string, ok bool) {
	if !strings.HasPrefix(s, "{{any") || !strings.HasSuffix(s, "}}") {
		return "", false
	}
	switch t := strings.TrimSpace(s[len("{{any") : len(s)-2]); t {
	case "", "value":
		return "any", true
	case "string", "number", "boolean", "object", "array":
		return t, true
	}
	return "", false
}

// WithConfig returns a Matcher that applies the rules of cfg (and, for a
// tools/call, those of cfg.Tools[tool]) and then asks base (nil means
// Default()). It also honours placeholders in recorded values. The rules
// work on copies: neither request changes. A match that needed a rule is not
// Exact. The result implements Indexer when base implements Indexer or
// Keyer.
func WithConfig(base Matcher, cfg *Config) (Matcher, error) {
	if base == nil {
		base = Default()
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	r := &rules{base: base, all: compile(cfg.ForTool(""))}
	if cfg != nil && len(cfg.Tools) > 0 {
		r.tools = map[string]*compiled{}
		for name := range cfg.Tools {
			r.tools[name] = compile(cfg.ForTool(name))
		}
	}
	return r, nil
}

type rules struct {
	base  Matcher
	all   *compiled
	tools map[string]*compiled // nil when cfg has no per-tool rules
}

type pathRule struct {
	path string
	segs []segment
	re   *regexp.Regexp // regex rules
	typ  string         // type rules
}

type compiled struct {
	ignore, unordered, subset []pathRule
	subsetAll                 bool
	checks                    []pathRule // regex and type rules, by path
	empty                     bool
	// plain is what the index key leaves out when every rule that the key
	// heeds is an ignore, regex or type rule on a path of plain names: the
	// key is then written from the raw params (appendIndexKey). nil
	// otherwise.
	plain *pruning
	// nested says that a check's path and another rule's lie one within
	// the other (or are the same): the rules, applied in turn, then see
	// what the others left, and Match decodes the params (plainMatch).
	nested bool
}

func compile(c *Config) *compiled {
	out := &compiled{empty: c.Empty()}
	paths := func(list []string) []pathRule {
		var rs []pathRule
		for _, p := range list {
			if p == "" {
				continue
			}
			segs, _ := parsePath(p) // checked by Check
			rs = append(rs, pathRule{path: p, segs: segs})
		}
		return rs
	}
	out.ignore, out.unordered, out.subset = paths(c.Ignore), paths(c.Unordered), paths(c.Subset)
	out.subsetAll = slices.Contains(c.Subset, "")
	for _, p := range sortedKeysOf(c.Regex) {
		segs, _ := parsePath(p)
		out.checks = append(out.checks, pathRule{path: p, segs: segs, re: regexp.MustCompile(c.Regex[p])})
	}
	for _, p := range sortedKeysOf(c.Type) {
		segs, _ := parsePath(p)
		out.checks = append(out.checks, pathRule{path: p, segs: segs, typ: c.Type[p]})
	}
	if len(out.unordered) == 0 && len(out.subset) == 0 && !out.subsetAll {
		out.plain = plainPaths(out.ignore, out.checks)
	}
	for i, ck := range out.checks {
		for j, other := range slices.Concat(out.ignore, out.checks) {
			if j != len(out.ignore)+i && within(ck.segs, other.segs) {
				out.nested = true
			}
		}
	}
	return out
}

// within reports whether one of the paths a and b is the other or lies
// within it.
func within(a, b []segment) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (r *rules) rulesFor(rec Request) *compiled {
	if r.tools != nil {
		raw := rec.toolRaw()
		if raw != nil && bytes.IndexByte(raw, '\\') < 0 {
			// No escapes: the name is the bytes between the quotes, looked
			// up without a copy.
			if c, ok := r.tools[string(raw[1:len(raw)-1])]; ok {
				return c
			}
		} else if c, ok := r.tools[rec.Tool()]; ok {
			return c
		}
	}
	return r.all
}

func mayHavePlaceholders(params json.RawMessage) bool {
	return bytes.Contains(params, []byte("{{any"))
}

func (r *rules) Match(recorded, live Request) Result {
	c := r.rulesFor(recorded)
	held := mayHavePlaceholders(recorded.Params)
	if c.empty && !held {
		return r.base.Match(recorded, live)
	}
	if !held {
		if match, exact := r.plainMatch(c, recorded, live); match {
			return Result{Match: true, Exact: exact}
		}
	}
	return r.decodedMatch(c, recorded, live)
}

// plainMatch reports that live matches recorded under rules c whose paths
// are plain (c.plain), read from the raw params: each check's live value
// is there and passes, and the keys without the rules' paths are equal,
// which is what decodedMatch then finds; exact when the whole keys are
// equal too. No match is no verdict: it is decodedMatch that says why
// (TestPlainRulesMatchAsDecoded).
func (r *rules) plainMatch(c *compiled, recorded, live Request) (match, exact bool) {
	if _, canonical := r.base.(defaultMatcher); !canonical || c.plain == nil || c.nested {
		return false, false
	}
	for _, p := range c.checks {
		v := []byte(live.Params)
		for _, seg := range p.segs {
			if v, _ = jsonrpc.Member(v, seg.key); v == nil {
				return false, false
			}
		}
		var t any
		var ok bool
		if v[0] == '"' { // a string, decoded as Decode would, without a decoder
			var s string
			if s, ok = jsonrpc.Unquote(v); !ok {
				return false, false
			}
			t = validUTF8(s)
		} else if t, ok = Decode(v); !ok {
			return false, false
		}
		if !p.accepts(t) {
			return false, false
		}
	}
	sc := scratches.Get().(*scratch)
	equal := func(p *pruning) bool {
		a := sc.appendKey(sc.buf[:0], recorded, false, p)
		n := len(a)
		both := sc.appendKey(a, live, false, p)
		sc.buf = both[:0]
		return string(both[:n]) == string(both[n:])
	}
	match = equal(c.plain)
	exact = match && equal(nil)
	if cap(sc.buf) <= maxScratch {
		scratches.Put(sc)
	}
	return match, exact
}

// decodedMatch is Match of the params decoded, with c's rules applied.
func (r *rules) decodedMatch(c *compiled, recorded, live Request) Result {
	rt, rok := Decode(recorded.Params)
	lt, lok := Decode(live.Params)
	if !rok || !lok {
		return r.base.Match(recorded, live)
	}
	var failed []Difference
	fail := func(d Difference) { failed = append(failed, d) }

	// Placeholders: a satisfied one takes its path out of the comparison.
	for _, f := range placeholders(rt) {
		got := lookup(lt, f.segs)
		if len(got) == 1 && hasType(got[0].val, f.val.(string)) {
			rt, lt = remove(rt, f.segs), remove(lt, f.segs)
		}
	}
	for _, p := range c.ignore {
		rt, lt = remove(rt, p.segs), remove(lt, p.segs)
	}
	for _, p := range c.checks {
		got := lookup(lt, p.segs)
		ok := len(got) > 0
		if !ok {
			fail(Difference{Path: p.path, Rule: p.describe()})
		}
		for _, g := range got {
			if !p.accepts(g.val) {
				fail(Difference{Path: g.path, Live: compact(g.val), Rule: p.describe()})
				ok = false
			}
		}
		if ok {
			rt, lt = remove(rt, p.segs), remove(lt, p.segs)
		}
	}
	for _, p := range c.unordered {
		rt, lt = update(rt, p.segs, sortArray), update(lt, p.segs, sortArray)
	}
	if c.subsetAll {
		lt = prune(rt, lt)
	}
	for _, p := range c.subset {
		for _, f := range lookup(rt, p.segs) {
			lt = update(lt, f.segs, func(lv any) any { return prune(f.val, lv) })
		}
	}
	rb, _ := json.Marshal(rt)
	lb, _ := json.Marshal(lt)
	res := r.base.Match(Request{Method: recorded.Method, Params: rb}, Request{Method: live.Method, Params: lb})
	if len(failed) == 0 {
		if res.Match {
			res.Exact = res.Exact && r.base.Match(recorded, live).Exact
		}
		return res
	}
	out := Result{Differences: failed}
	for _, d := range res.Differences {
		if !slices.ContainsFunc(failed, func(f Difference) bool { return f.Path == d.Path }) {
			out.Differences = append(out.Differences, d)
		}
	}
	out.Diff = res.Diff
	if out.Diff == "" {
		out.Diff = cmp.Diff(Plain(rt), Plain(lt))
	}
	return out
}

// KeyDecides reports whether, for this recorded request, equal index keys
// decide the match on their own: the rules that apply to it only ignore
// paths (which the index key leaves out) and it holds no placeholder.
func (r *rules) KeyDecides(req Request) bool {
	if _, ok := r.base.(Keyer); !ok {
		return false
	}
	c := r.rulesFor(req)
	onlyIgnore := len(c.checks) == 0 && len(c.unordered) == 0 && len(c.subset) == 0 && !c.subsetAll
	return onlyIgnore && !mayHavePlaceholders(req.Params)
}

// ExactKey is the base matcher's key: a match decided by the index key is
// exact when the exact keys are equal too (nothing was ignored). It is ""
// when no rule applies to the request: the index key is exact already.
func (r *rules) ExactKey(req Request) string {
	if r.rulesFor(req).empty {
		return ""
	}
	return r.base.(Keyer).Key(req)
}

// IndexKey keys a request with every path that a rule loosens taken out.
func (r *rules) IndexKey(req Request) (string, bool) {
	k, ok := r.appendIndexKey(nil, req, false)
	return string(k), ok
}

func (r *rules) appendIndexKey(dst []byte, req Request, valid bool) ([]byte, bool) {
	switch r.base.(type) {
	case Indexer, Keyer:
	default:
		return dst, false
	}
	c := r.rulesFor(req)
	held := mayHavePlaceholders(req.Params)
	if c.empty && !held {
		return appendIndexKey(dst, r.base, req, valid)
	}
	if _, canonical := r.base.(defaultMatcher); canonical && c.plain != nil && !held {
		// What the decoded params below would give, without decoding
		// them (TestPlainPathsKeyAsDecoded).
		return appendCanonicalKey(dst, req, valid, c.plain), true
	}
	return r.decodedKey(dst, req, c, held, valid)
}

// decodedKey is appendIndexKey's key of req's params decoded, with the
// paths of c's rules taken out or sorted, and held when they may hold
// placeholders.
func (r *rules) decodedKey(dst []byte, req Request, c *compiled, held, valid bool) ([]byte, bool) {
	t, ok := Decode(req.Params)
	if !ok {
		return appendIndexKey(dst, r.base, req, valid)
	}
	if held {
		held = len(placeholders(t)) > 0
	}
	for _, list := range [][]pathRule{c.ignore, c.checks, c.subset} {
		for _, p := range list {
			t = remove(t, p.segs)
		}
	}
	if c.subsetAll {
		t = map[string]any{}
	}
	for _, p := range c.unordered {
		t = update(t, p.segs, sortArray)
	}
	b, _ := json.Marshal(t)
	dst, ok = appendIndexKey(dst, r.base, Request{Method: req.Method, Params: b}, true) // json.Marshal's
	return dst, ok && !held
}

func (p pathRule) describe() string {
	if p.re != nil {
		return "regex " + p.re.String()
	}
	return "type " + p.typ
}

func (p pathRule) accepts(v any) bool {
	if p.re == nil {
		return hasType(v, p.typ)
	}
	if s, ok := v.(string); ok {
		return p.re.MatchString(s)
	}
	b, _ := json.Marshal(v)
	return p.re.Match(b)
}

// hasType reports whether v (a decoded JSON value) is of the named type, or
// of the type a placeholder names.
func hasType(v any, typ string) bool {
	if t, ok := placeholder(typ); ok {
		typ = t
	}
	return typ == "any" || typeOf(v) == typ
}

func typeOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// placeholders finds the placeholder strings of a recorded tree.
func placeholders(tree any) []found {
	var out []found
	var walk func(v any, path string, segs []segment)
	walk = func(v any, path string, segs []segment) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x[k], joinPath(path, k), append(segs[:len(segs):len(segs)], segment{key: k}))
			}
		case []any:
			for i, e := range x {
				k := fmt.Sprint(i)
				walk(e, joinPath(path, k), append(segs[:len(segs):len(segs)], segment{key: k}))
			}
		case string:
			if _, ok := placeholder(x); ok && len(segs) > 0 {
				out = append(out, found{path: path, segs: segs, val: x})
			}
		}
	}
	walk(tree, "", nil)
	return out
}

// sortArray orders an array's elements by their canonical JSON text.
func sortArray(v any) any {
	a, ok := v.([]any)
	if !ok {
		return v
	}
	keys := make([]string, len(a))
	idx := make([]int, len(a))
	for i, e := range a {
		b, _ := json.Marshal(e)
		keys[i], idx[i] = string(b), i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return strings.Compare(keys[x], keys[y]) })
	out := make([]any, len(a))
	for i, j := range idx {
		out[i] = a[j]
	}
	return out
}

// prune drops from live the object members that recorded lacks, at every
// depth (arrays of equal length element by element).
func prune(recorded, live any) any {
	switch r := recorded.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := make(map[string]any, len(r))
		for k, lv := range l {
			if rv, ok := r[k]; ok {
				out[k] = prune(rv, lv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(r) {
			return live
		}
		out := make([]any, len(l))
		for i := range l {
			out[i] = prune(r[i], l[i])
		}
		return out
	}
	return live
}
