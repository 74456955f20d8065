package cassettefile

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
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
// without HTML escaping: printable ASCII as it is, without calling it.
func AppendQuoted(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(s)
			return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
