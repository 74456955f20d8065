package jsonrpc

import (
	"bytes"
	"testing"
)

// TestUnquoteView: UnquoteView is Unquote, sharing raw's bytes when the
// string has no escapes.
func TestUnquoteView(t *testing.T) {
	for _, raw := range []string{`""`, `"plain"`, `"esc\"aped\n"`, `"\u00e9t\u00e9"`, `7`, `null`, `"open`} {
		want, wantOK := Unquote([]byte(raw))
		b := []byte(raw)
		got, ok := UnquoteView(b)
		if got != want || ok != wantOK {
			t.Errorf("UnquoteView(%s) = %q, %v; Unquote: %q, %v", raw, got, ok, want, wantOK)
		}
		if ok && len(got) > 0 && !bytes.ContainsRune([]byte(raw), '\\') {
			b[1] = 'X'
			if got[0] != 'X' {
				t.Errorf("UnquoteView(%s) copied", raw)
			}
		}
	}
}

// TestAppendCompactDocument: a document with white space around its value
// is compacted; anything else leaves dst as it was.
func TestAppendCompactDocument(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{" {\"a\" : [1, 2 ],\n\t\"b\":\"x y\"} \n", `{"a":[1,2],"b":"x y"}`, true},
		{`"s"`, `"s"`, true},
		{``, ``, false},
		{`{"a":1} {}`, ``, false},
		{`{"a":`, ``, false},
	} {
		got, ok := AppendCompactDocument([]byte("x"), []byte(c.in))
		if ok != c.ok || string(got) != "x"+c.want {
			t.Errorf("AppendCompactDocument(%q) = %q, %v; want %q, %v", c.in, got, ok, "x"+c.want, c.ok)
		}
	}
}
