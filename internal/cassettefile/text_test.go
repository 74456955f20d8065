package cassettefile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendQuoted: both quoters write what encoding/json writes, with and
// without HTML escaping.
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", `a "b" \c`, "<tag> & more", "Grüße, 東京 ☀", "line\nbreak\t\x01",
		"\u2028\u2029", "bad \xff utf-8", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			enc.Encode(s)
			want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
			got := AppendQuoted([]byte("x"), s)
			if html {
				got = AppendQuotedHTML([]byte("x"), s)
			}
			if !bytes.Equal(got[1:], want) || got[0] != 'x' {
				t.Errorf("html %v, %q: %s, want %s", html, s, got, want)
			}
		}
	})
}
