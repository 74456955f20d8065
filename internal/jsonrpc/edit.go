package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// This file edits raw JSON in place: it finds the span of one member of an
// object and splices a new value in, so that rewriting an id or a progress
// token leaves every other byte of a recorded message as it was.

var errNotObject = errors.New("not a JSON object")

// Member returns the raw value of the member key of the object raw, or nil
// when raw is an object without it.
func Member(raw json.RawMessage, key string) (json.RawMessage, error) {
	start, end, _, err := memberSpan(raw, key)
	if err != nil || start < 0 {
		return nil, err
	}
	return raw[start:end], nil
}

// SetMember returns raw with the value at path (a chain of object keys)
// replaced by value, or added to the innermost object when absent. Objects
// along the path must exist.
func SetMember(raw json.RawMessage, value json.RawMessage, path ...string) (json.RawMessage, error) {
	if len(path) == 0 {
		return value, nil
	}
	start, end, closeAt, err := memberSpan(raw, path[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path[0], err)
	}
	if start < 0 {
		if len(path) > 1 {
			return nil, fmt.Errorf("%s: no such member", path[0])
		}
		key, _ := json.Marshal(path[0])
		out := make([]byte, 0, len(raw)+len(key)+len(value)+2)
		out = append(out, raw[:closeAt]...)
		if bytes.IndexByte(bytes.TrimSpace(raw[1:closeAt]), '"') >= 0 {
			out = append(out, ',')
		}
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, value...)
		return append(out, raw[closeAt:]...), nil
	}
	inner, err := SetMember(raw[start:end], value, path[1:]...)
	if err != nil {
		return nil, fmt.Errorf("%s.%w", path[0], err)
	}
	out := make([]byte, 0, len(raw)-(end-start)+len(inner))
	out = append(out, raw[:start]...)
	out = append(out, inner...)
	return append(out, raw[end:]...), nil
}

// DeleteMember returns raw without the top-level member key (raw itself when
// it has no such member).
func DeleteMember(raw json.RawMessage, key string) (json.RawMessage, error) {
	start, end, _, err := memberSpan(raw, key)
	if err != nil || start < 0 {
		return raw, err
	}
	// Walk back over the key, the colon and the comma before it; or, for the
	// first member, forward over the comma after it.
	ks := bytes.LastIndexByte(raw[:start], ':')
	ks = lastQuoteStart(raw[:ks])
	before := bytes.TrimRight(raw[:ks], " \t\r\n")
	after := raw[end:]
	if before[len(before)-1] == ',' {
		before = before[:len(before)-1]
	} else {
		after = bytes.TrimLeft(after, " \t\r\n")
		if len(after) > 0 && after[0] == ',' {
			after = after[1:]
		}
	}
	out := make([]byte, 0, len(before)+len(after))
	out = append(out, before...)
	return append(out, after...), nil
}

// lastQuoteStart finds the opening quote of the string that ends raw.
func lastQuoteStart(raw []byte) int {
	i := bytes.LastIndexByte(raw, '"') // closing quote
	for j := i - 1; j >= 0; j-- {
		if raw[j] == '"' {
			k := j - 1
			for k >= 0 && raw[k] == '\\' {
				k--
			}
			if (j-k-1)%2 == 0 {
				return j
			}
		}
	}
	return 0
}

// memberSpan scans the object raw for key and returns the value's span, or
// start = -1 when absent; closeAt is the offset of the closing brace.
func memberSpan(raw []byte, key string) (start, end, closeAt int, err error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return -1, -1, -1, errNotObject
	}
	i++
	start = -1
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return -1, -1, -1, errors.New("unexpected end of object")
		}
		if raw[i] == '}' {
			if start < 0 {
				return -1, -1, i, nil
			}
			return start, end, i, nil
		}
		if raw[i] == ',' {
			i++
			continue
		}
		ke, err := skipValue(raw, i)
		if err != nil {
			return -1, -1, -1, err
		}
		k := raw[i:ke]
		i = skipSpace(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return -1, -1, -1, errors.New("expected ':' in object")
		}
		vs := skipSpace(raw, i+1)
		ve, err := skipValue(raw, vs)
		if err != nil {
			return -1, -1, -1, err
		}
		if keyEquals(k, key) {
			start, end = vs, ve // the last duplicate wins, as in encoding/json
		}
		i = ve
	}
}

func keyEquals(quoted []byte, key string) bool {
	if len(quoted) == len(key)+2 && string(quoted[1:len(quoted)-1]) == key {
		return true
	}
	if bytes.IndexByte(quoted, '\\') < 0 {
		return false
	}
	var s string
	return json.Unmarshal(quoted, &s) == nil && s == key
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value that starts at i.
// It trusts raw to be valid JSON (it was checked when it was parsed) and only
// tracks strings and nesting.
func skipValue(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, errors.New("unexpected end of JSON")
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				e, err := skipString(raw, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("unterminated object or array")
	default:
		j := i
		for j < len(raw) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(raw[j])) {
			j++
		}
		if j == i {
			return 0, fmt.Errorf("unexpected %q", raw[i])
		}
		return j, nil
	}
}

func replaceMember(raw json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	return SetMember(raw, value, key)
}

// EachMember calls f with each member of the object raw, in order, the
// values as sub-slices of raw. raw must be valid JSON; for anything but an
// object it returns errNotObject.
func EachMember(raw []byte, f func(key string, value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errNotObject
	}
	return eachMember(raw[i:], f)
}

// EachMemberRaw is EachMember with each key as it is written: a JSON
// string, quotes and escapes included, a sub-slice of raw. It copies
// nothing.
func EachMemberRaw(raw []byte, f func(quoted, value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errNotObject
	}
	return eachMemberRaw(raw[i:], f)
}

// EachElement calls f with each element of the array raw, in order. raw
// must be valid JSON; for anything but an array it returns an error.
func EachElement(raw []byte, f func(value []byte) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		e, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		if err := f(raw[i:e]); err != nil {
			return err
		}
		i = skipSpace(raw, e)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// Unquote returns the string a JSON string literal holds.
func Unquote(raw []byte) (string, bool) { return unquote(raw) }

// UnquoteView is Unquote without a copy for a string without escapes: the
// result shares raw's bytes, which must not change while it is used.
func UnquoteView(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return unsafe.String(unsafe.SliceData(raw[1:]), len(raw)-2), true
	}
	return unquote(raw)
}

// EachMemberAt is EachMember with the offsets (in raw) of each key and
// value.
func EachMemberAt(raw []byte, f func(key string, keyAt int, value []byte, valueAt int) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errNotObject
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != '}' {
		ke, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		key, ok := unquote(raw[i:ke])
		if !ok {
			return errors.New("bad member name")
		}
		j := skipSpace(raw, ke)
		if j >= len(raw) || raw[j] != ':' {
			return errors.New("expected ':' in object")
		}
		vs := skipSpace(raw, j+1)
		ve, err := skipValue(raw, vs)
		if err != nil {
			return err
		}
		if err := f(key, i, raw[vs:ve], vs); err != nil {
			return err
		}
		i = skipSpace(raw, ve)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// EachElementAt is EachElement with the offset (in raw) of each element.
func EachElementAt(raw []byte, f func(value []byte, at int) error) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errors.New("not a JSON array")
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		e, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		if err := f(raw[i:e], i); err != nil {
			return err
		}
		i = skipSpace(raw, e)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
}

// NameIs reports whether the member name quoted (a JSON string as written,
// quotes included, as EachMemberRaw gives it) is key.
func NameIs(quoted []byte, key string) bool { return keyEquals(quoted, key) }

// A Marker is a JSON string as written (quotes included), such as
// `"input_required"`, that a message is quickly tested for (Marker.In)
// before it is decoded.
type Marker struct {
	whole, tail []byte
}

// NewMarker is the marker of quoted.
func NewMarker(quoted string) Marker {
	m := Marker{whole: []byte(quoted)}
	// The quote a marker starts with starts every string of a message,
	// and bytes.Index stops at each; its tail from its last capital or
	// underscore, rarer, is looked for first.
	if i := strings.LastIndexFunc(quoted, func(r rune) bool { return r == '_' || ('A' <= r && r <= 'Z') }); i > 0 {
		m.tail = m.whole[i:]
	}
	return m
}

// In reports whether msg holds the marker.
func (m Marker) In(msg []byte) bool {
	if m.tail != nil && !bytes.Contains(msg, m.tail) {
		return false
	}
	return bytes.Contains(msg, m.whole)
}
