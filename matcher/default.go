package matcher

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// Default returns the default matcher described in the package comment. It
// also implements Keyer.
func Default() Matcher { return defaultMatcher{} }

type defaultMatcher struct{}

// view returns what the default matcher compares of a request's params, as a
// normalized JSON tree (numbers canonical, volatile _meta keys dropped, no
// member whose value is an empty object).
func view(r Request) any {
	if Handshake(r.Method) || r.Method == "ping" {
		return nil
	}
	tree, ok := Decode(r.Params)
	if !ok {
		return string(r.Params) // unparsable params compare as text
	}
	return dropEmptyObjects(selectCompared(r.Method, tree))
}

// selectCompared picks from decoded params what the default matcher
// compares of a request of method.
func selectCompared(method string, tree any) any {
	obj, isObj := tree.(map[string]any)
	if !isObj {
		return tree
	}
	switch method {
	case "tools/call":
		v := map[string]any{"name": obj["name"]}
		if a, ok := obj["arguments"]; ok {
			v["arguments"] = a
		}
		return v
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		if c, ok := obj["cursor"]; ok {
			return map[string]any{"cursor": c}
		}
		return map[string]any{}
	}
	return dropVolatileMeta(obj)
}

// dropEmptyObjects removes, at every depth of a decoded tree, the object
// members whose value is an empty object, or becomes one once its own are
// removed: clients differ in sending "arguments": {} or "context": {} and
// sending nothing, and both mean the same. It changes tree in place.
func dropEmptyObjects(tree any) any {
	switch x := tree.(type) {
	case map[string]any:
		for k, v := range x {
			if m, ok := dropEmptyObjects(v).(map[string]any); ok && len(m) == 0 {
				delete(x, k)
			}
		}
	case []any:
		for _, e := range x {
			dropEmptyObjects(e)
		}
	}
	return tree
}

func dropVolatileMeta(obj map[string]any) map[string]any {
	meta, ok := obj["_meta"].(map[string]any)
	if !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	kept := map[string]any{}
	for k, v := range meta {
		if !volatileMeta(k) {
			kept[k] = v
		}
	}
	if len(kept) == 0 {
		delete(out, "_meta")
	} else {
		out["_meta"] = kept
	}
	return out
}

// Key returns the canonical form of what the default matcher compares.
func (defaultMatcher) Key(r Request) string { return canonicalKey(r) }

func (defaultMatcher) appendIndexKey(dst []byte, r Request, valid bool) ([]byte, bool) {
	return appendCanonicalKey(dst, r, valid, nil), true
}

func (m defaultMatcher) Match(recorded, live Request) Result {
	if recorded.Method != live.Method {
		return Result{Differences: []Difference{{Recorded: strconv.Quote(recorded.Method), Live: strconv.Quote(live.Method)}}}
	}
	rv, lv := view(recorded), view(live)
	diffs := Compare("", rv, lv)
	if len(diffs) == 0 {
		return Result{Match: true, Exact: true}
	}
	return Result{Differences: diffs, Diff: cmp.Diff(Plain(rv), Plain(lv))}
}

// Plain returns a copy of tree (as Decode returns it) to be shown, with
// each json.Number replaced by the number it holds: an int64 (a uint64
// beyond its range) for an integer, else a float64 when that is exact.
// cmp.Diff then shows 2 as int64(2), not as s"2". A number that none holds
// exactly stays a json.Number.
func Plain(tree any) any {
	switch x := tree.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = Plain(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = Plain(v)
		}
		return out
	case json.Number:
		s := canonicalNumber(string(x))
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && canonicalNumber(strconv.FormatFloat(f, 'g', -1, 64)) == s {
			return f
		}
	}
	return tree
}

// Decode parses JSON into a tree of map[string]any, []any, string, bool,
// nil and json.Number, with every number rewritten to its canonical form so
// that 1 and 1.0 are equal and large integers stay exact.
func Decode(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return canonicalize(v), true
}

func canonicalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonicalize(e)
		}
	case json.Number:
		return json.Number(canonicalNumber(string(x)))
	}
	return v
}

// canonicalNumber returns the shortest plain decimal form of a JSON number
// ("1.0" → "1", "1e2" → "100", "-0.50" → "-0.5"); exponents beyond ±40 are
// kept in exponent form. It is exact: no float conversion.
func canonicalNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return s
		}
		mant, exp = s[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0"
	}
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	var out string
	switch {
	case exp > 40 || exp < -40-len(digits):
		out = digits + "e" + strconv.Itoa(exp)
	case exp >= 0:
		out = digits + strings.Repeat("0", exp)
	case -exp < len(digits):
		out = digits[:len(digits)+exp] + "." + digits[len(digits)+exp:]
	default:
		out = "0." + strings.Repeat("0", -exp-len(digits)) + digits
	}
	if neg {
		return "-" + out
	}
	return out
}

// Compare walks two normalized trees and lists where they differ, with gjson
// paths relative to prefix.
func Compare(prefix string, recorded, live any) []Difference {
	var out []Difference
	compare(prefix, recorded, live, &out)
	return out
}

func compare(path string, a, b any, out *[]Difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			av, ain := am[k]
			bv, bin := bm[k]
			p := joinPath(path, k)
			// An absent member is an empty object to an object on the other
			// side: the difference is named where it lies, inside.
			_, aobj := av.(map[string]any)
			_, bobj := bv.(map[string]any)
			switch {
			case !ain && bobj:
				compare(p, map[string]any{}, bv, out)
			case !bin && aobj:
				compare(p, av, map[string]any{}, out)
			case !ain:
				*out = append(*out, Difference{Path: p, Live: compact(bv)})
			case !bin:
				*out = append(*out, Difference{Path: p, Recorded: compact(av)})
			default:
				compare(p, av, bv, out)
			}
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			compare(joinPath(path, strconv.Itoa(i)), as[i], bs[i], out)
		}
		return
	}
	if !equal(a, b) {
		*out = append(*out, Difference{Path: path, Recorded: compact(a), Live: compact(b)})
	}
}

func equal(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// joinPath appends a key to a gjson path, escaping the characters that gjson
// treats specially (so a _meta key with dots stays one key).
func joinPath(path, key string) string {
	var sb strings.Builder
	for _, r := range key {
		switch r {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%':
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	if path == "" {
		return sb.String()
	}
	return path + "." + sb.String()
}
