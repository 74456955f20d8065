package matcher

import (
	"encoding/json"
	"testing"
)

// viewKey is the key as view computes it (decode, normalize, encode): the
// reference that canonicalKey must agree with.
func viewKey(r Request) string {
	b, _ := json.Marshal(view(r))
	return r.Method + "\x00" + string(b)
}

func TestCanonicalKeyAgreesWithView(t *testing.T) {
	pairs := [][2]string{
		{`{"name":"a","arguments":{"x":1,"y":[1.0,2e0]}}`, `{"arguments":{"y":[1,2],"x":1.00},"name":"a"}`},
		{`{"name":"a","arguments":{"s":"\u0041"}}`, `{"name":"a","arguments":{"s":"A"}}`},
		{`{"name":"a","arguments":{"x":1,"x":2}}`, `{"name":"a","arguments":{"x":2}}`},
		{`{"name":"a","_meta":{"progressToken":1}}`, `{"name":"a"}`},
		{`{"uri":"x","_meta":{"progressToken":1,"keep":2}}`, `{"uri":"x","_meta":{"keep":2}}`},
		{`{"uri":"x","_meta":{"progressToken":1}}`, `{"uri":"x"}`},
		{`{"uri":"x","_meta":{}}`, `{"uri":"x"}`},
		{`{"cursor":"c","_meta":{"traceparent":"t"}}`, `{"cursor":"c"}`},
		{`{"a":"é\n<>"}`, `{"a":"\u00e9\n\u003c>"}`},
		{`{"a":"x"}`, `{"a":"y"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":1,"context":{}}`, `{"a":1}`},
		{`{"a":{"b":{"c":{}}}}`, `{}`},
		{`{"a":[{"b":{}}]}`, `{"a":[{}]}`},
		{`{"a":[{}]}`, `{"a":[]}`},
	}
	for _, method := range []string{"tools/call", "resources/read", "tools/list", "prompts/get"} {
		for _, p := range pairs {
			a, b := Request{method, json.RawMessage(p[0])}, Request{method, json.RawMessage(p[1])}
			if (viewKey(a) == viewKey(b)) != (canonicalKey(a) == canonicalKey(b)) {
				t.Errorf("%s %s vs %s: view says equal=%v, canonical says %v\n%q\n%q", method, p[0], p[1],
					viewKey(a) == viewKey(b), canonicalKey(a) == canonicalKey(b), canonicalKey(a), canonicalKey(b))
			}
		}
	}
}

func FuzzCanonicalKey(f *testing.F) {
	f.Add(`{"name":"a","arguments":{"x":1}}`, `{"arguments":{"x":1.0},"name":"a"}`, "tools/call")
	f.Add(`{"_meta":{"a.b":1,"progressToken":2},"q":[1,{"z":null}]}`, `{"q":[1,{"z":null}],"_meta":{"a.b":1}}`, "x/y")
	f.Add(`{"n":-0,"m":100,"k":-12}`, `{"n":0,"m":1e2,"k":-12.0}`, "x/y")
	f.Add(`{"context":{"arguments":{}},"ref":{}}`, `{}`, "completion/complete")
	f.Fuzz(func(t *testing.T, a, b, method string) {
		if !json.Valid([]byte(a)) || !json.Valid([]byte(b)) {
			return
		}
		ra, rb := Request{method, json.RawMessage(a)}, Request{method, json.RawMessage(b)}
		if (viewKey(ra) == viewKey(rb)) != (canonicalKey(ra) == canonicalKey(rb)) {
			t.Fatalf("disagree on %s / %s (%s): canonical %q %q", a, b, method, canonicalKey(ra), canonicalKey(rb))
		}
		// Params known to be valid are keyed alike without the check.
		checked, _ := AppendIndexKey(nil, Default(), ra)
		trusted, _ := AppendIndexKeyValid(nil, Default(), ra)
		if string(checked) != string(trusted) {
			t.Fatalf("%s (%s): AppendIndexKey %q, AppendIndexKeyValid %q", a, method, checked, trusted)
		}
	})
}

// TestKeyOfInvalidParams: params that are no valid JSON are keyed by their
// text, as a JSON string, whatever way they fail: an object is checked as
// its members are read, anything else before it is read.
func TestKeyOfInvalidParams(t *testing.T) {
	for _, p := range []string{`{"a":`, `{"a":1,}`, `{"a":1} x`, `{"name":"t","arguments":{"x":tru}}`, `{"_meta":{"a":"\x"}}`, `[1,`, `"abc`, `nul`, `{"a":1}{}`} {
		for _, method := range []string{"tools/call", "tools/list", "resources/read"} {
			q, _ := json.Marshal(p)
			want := method + "\x00" + string(q)
			if got := canonicalKey(Request{method, json.RawMessage(p)}); got != want {
				t.Errorf("%s %s: key %q, want %q", method, p, got, want)
			}
		}
	}
}

// TestInvalidUTF8KeysAsDecoded: a byte that is no UTF-8, in a string or a
// member name, keys as encoding/json decodes it, as U+FFFD (the raw key
// kept the byte in a string and wrote "\ufffd" in a name, where decoded
// params write the character: keyed apart from the same params escaped).
func TestInvalidUTF8KeysAsDecoded(t *testing.T) {
	for _, p := range [][2]string{
		{"{\"a\":\"\xff\"}", `{"a":"\ufffd"}`},
		{"{\"\xff\":1}", `{"\ufffd":1}`},
		{"{\"a\":\"x\xffy\xfe\"}", `{"a":"x\ufffdy\ufffd"}`},
		{"{\"a\":\"\xff\xfe\"}", `{"a":"\ufffd"}`},
		{"{\"\xff\":1,\"\xfe\":2}", `{"\ufffd":2}`},
	} {
		a, b := Request{"x/y", json.RawMessage(p[0])}, Request{"x/y", json.RawMessage(p[1])}
		if (viewKey(a) == viewKey(b)) != (canonicalKey(a) == canonicalKey(b)) {
			t.Errorf("%q vs %q: view says equal=%v, canonical %q %q", p[0], p[1], viewKey(a) == viewKey(b), canonicalKey(a), canonicalKey(b))
		}
	}
}
