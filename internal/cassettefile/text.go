package cassettefile

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendMillis appends a time offset in milliseconds as a cassette holds
// it: rounded to the microsecond, at most three decimals, 0 for zero.
func AppendMillis(dst []byte, ms float64) []byte {
	if ms == 0 {
		return append(dst, '0')
	}
	v := math.Round(ms*1000) / 1000
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// AppendQuoted appends s as a JSON string, as encoding/json writes it
// without HTML escaping: a string that needs no escape as it is, without
// calling it.
func AppendQuoted(dst []byte, s string) []byte { return appendQuoted(dst, s, false) }

// AppendQuotedHTML is AppendQuoted with <, > and & escaped, as json.Marshal
// writes a string.
func AppendQuotedHTML(dst []byte, s string) []byte { return appendQuoted(dst, s, true) }

func appendQuoted(dst []byte, s string, html bool) []byte {
	if !plain(s, html) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.Encode(s)
		return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// plain reports whether encoding/json writes s as it is between quotes:
// no control character, quote or backslash, nothing that is not UTF-8, no
// U+2028 or U+2029, and, with html, no <, > or &.
func plain(s string, html bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
