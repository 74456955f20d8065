package cassettes

import (
	"bytes"
	"encoding/json"
)

// MatchMember is a "match" member of a cassette file (the cassette's own or
// an interaction's) as written in the file, so that a matcher configuration
// error can be reported at its line and column.
type MatchMember struct {
	// Interaction is the index of the interaction in Interactions; -1 for
	// the cassette's top-level "match".
	Interaction int
	// Offset is the byte offset of the member's value in the file.
	Offset int64
	// Raw is the value as written (not compacted).
	Raw json.RawMessage
}

// MatchMembers finds the "match" members of a cassette file, the top-level
// one first, then the interactions' in order. It assumes data parses (see
// Parse) and returns what it found before any syntax error.
func MatchMembers(data []byte) []MatchMember {
	var out []MatchMember
	members(data, 0, func(key string, off int64, raw json.RawMessage) {
		switch key {
		case "match":
			out = append(out, MatchMember{Interaction: -1, Offset: off, Raw: raw})
		case "interactions":
			elements(raw, off, func(i int, eoff int64, elem json.RawMessage) {
				members(elem, eoff, func(key string, moff int64, mraw json.RawMessage) {
					if key == "match" {
						out = append(out, MatchMember{Interaction: i, Offset: moff, Raw: mraw})
					}
				})
			})
		}
	})
	return out
}

// skipSpace returns the offset of the next token at or after off.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && bytes.IndexByte([]byte(", \t\r\n:"), data[off]) >= 0 {
		off++
	}
	return off
}

// members calls f for each member of the JSON object data (at offset base
// of the file) with the offset of its value.
func members(data []byte, base int64, f func(key string, off int64, raw json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := t.(string)
		off := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return
		}
		f(key, base+off, raw)
	}
}

// elements calls f for each element of the JSON array data.
func elements(data []byte, base int64, f func(i int, off int64, raw json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return
	}
	for i := 0; dec.More(); i++ {
		off := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return
		}
		f(i, base+off, raw)
	}
}
