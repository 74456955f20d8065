package matcher

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file computes the default matcher's key straight from the raw JSON:
// what view decodes into maps and encodes again, appendCanonical writes in
// one pass (members sorted, numbers canonical, strings by value), so that
// indexing a large cassette and looking up a live request stay cheap.

// canonicalKey is the default matcher's key of a request.
func canonicalKey(r Request) string {
	buf := make([]byte, 0, len(r.Method)+len(r.Params)+8)
	buf = append(buf, r.Method...)
	buf = append(buf, 0)
	if Handshake(r.Method) || r.Method == "ping" {
		return string(append(buf, "null"...))
	}
	params := bytes.TrimSpace(r.Params)
	if len(params) == 0 {
		return string(append(buf, "{}"...))
	}
	if !json.Valid(params) {
		q, _ := json.Marshal(string(r.Params))
		return string(append(buf, q...))
	}
	if params[0] != '{' {
		out, _ := appendCanonical(buf, params, "")
		return string(out)
	}
	var keep func(key string) bool
	var metaFilter bool
	switch r.Method {
	case "tools/call":
		keep = func(k string) bool { return k == "name" || k == "arguments" }
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		keep = func(k string) bool { return k == "cursor" }
	default:
		metaFilter = true
	}
	out, ok := appendObject(buf, params, func(key string) bool {
		return keep == nil || keep(key)
	}, metaFilter)
	if !ok {
		return Default().(Keyer).Key(r) // cannot happen for valid JSON
	}
	return string(out)
}

type member struct {
	key   string
	value []byte
}

// appendObject writes the object raw canonically: the members that keep
// accepts, sorted by key (the last of duplicates wins, as in
// encoding/json); with metaFilter, _meta without its volatile keys (and
// without _meta when nothing is left).
func appendObject(dst, raw []byte, keep func(string) bool, metaFilter bool) ([]byte, bool) {
	var members []member
	err := jsonrpc.EachMember(raw, func(key string, value []byte) error {
		if !keep(key) {
			return nil
		}
		for i := range members {
			if members[i].key == key {
				members = append(members[:i], members[i+1:]...)
				break
			}
		}
		members = append(members, member{key, value})
		return nil
	})
	if err != nil {
		return dst, false
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	n := 0
	for _, m := range members {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.key)
		dst = append(dst, ':')
		var ok bool
		if metaFilter && m.key == "_meta" && bytes.HasPrefix(bytes.TrimSpace(m.value), []byte("{")) {
			before := len(dst)
			dst, ok = appendObject(dst, m.value, func(k string) bool { return !VolatileMeta(k) }, false)
			if ok && string(dst[before:]) == "{}" {
				dst = dst[:mark] // nothing left of _meta
				continue
			}
		} else {
			dst, ok = appendCanonical(dst, m.value, m.key)
		}
		if !ok {
			return dst, false
		}
		n++
	}
	return append(dst, '}'), true
}

// appendCanonical writes one JSON value canonically.
func appendCanonical(dst, raw []byte, _ string) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return dst, false
	}
	switch c := raw[0]; {
	case c == '{':
		return appendObject(dst, raw, func(string) bool { return true }, false)
	case c == '[':
		dst = append(dst, '[')
		n := 0
		ok := true
		err := jsonrpc.EachElement(raw, func(v []byte) error {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst, ok = appendCanonical(dst, v, "")
			if !ok {
				return errBadValue
			}
			return nil
		})
		return append(dst, ']'), err == nil
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return append(dst, raw...), true
		}
		s, ok := jsonrpc.Unquote(raw)
		if !ok {
			return dst, false
		}
		return appendString(dst, s), true
	case c == '-' || c >= '0' && c <= '9':
		return append(dst, CanonicalNumber(string(raw))...), true
	}
	return append(dst, raw...), true // true, false, null
}

var errBadValue = errorString("bad value")

type errorString string

func (e errorString) Error() string { return string(e) }

// appendString writes s as a JSON string, as encoding/json would (without
// HTML escaping, which does not matter for a key).
func appendString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
