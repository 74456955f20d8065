package matcher

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file computes the default matcher's key straight from the raw JSON:
// what view decodes into maps and encodes again, appendCanonical writes in
// one pass (members sorted, numbers canonical, strings by value), so that
// indexing a large cassette and looking up a live request stay cheap.

// canonicalKey is the default matcher's key of a request.
func canonicalKey(r Request) string {
	sc := scratches.Get().(*scratch)
	out := sc.appendKey(sc.buf[:0], r, false, nil)
	key := string(out)
	if cap(out) <= maxScratch {
		sc.buf = out[:0]
		scratches.Put(sc)
	}
	return key
}

// appendCanonicalKey appends the default matcher's key of r to dst;
// valid says that r's params are known to be valid JSON. The members on
// the paths of p are left out, as if they were not there (nil: none).
func appendCanonicalKey(dst []byte, r Request, valid bool, p *pruning) []byte {
	sc := scratches.Get().(*scratch)
	dst = sc.appendKey(dst, r, valid, p)
	scratches.Put(sc)
	return dst
}

// plainInteger reports that raw, a JSON number, is an integer that
// canonicalNumber leaves as it is: no leading zero, no "-0", no fraction or
// exponent, and short enough never to be written with one.
func plainInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 40 || digits[0] == '0' && (len(digits) > 1 || len(raw) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// scratch is the working memory of canonical keys, reused: the key being
// written, and a stack of the members of the objects being sorted.
type scratch struct {
	buf     []byte
	members []member
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch is the largest key buffer kept for reuse.
const maxScratch = 64 << 10

func (sc *scratch) appendKey(buf []byte, r Request, valid bool, p *pruning) []byte {
	buf = append(buf, r.Method...)
	buf = append(buf, 0)
	if Handshake(r.Method) || r.Method == "ping" {
		return append(buf, "null"...)
	}
	params := bytes.TrimSpace(r.Params)
	if len(params) == 0 {
		return append(buf, "{}"...)
	}
	if params[0] != '{' {
		if !valid && !jsonrpc.Valid(params) { // encoding/json's answer, in half the time
			return appendInvalid(buf, r.Params)
		}
		out, _ := sc.appendCanonical(buf, params) // p prunes no array's elements: plainPaths
		return out
	}
	var keep func(key []byte) bool
	var metaFilter bool
	switch r.Method {
	case "tools/call":
		keep = func(k []byte) bool { return string(k) == "name" || string(k) == "arguments" }
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		keep = func(k []byte) bool { return string(k) == "cursor" }
	default:
		metaFilter = true
	}
	// The object is checked as its members are read (check), not read once
	// more by Valid first; not at all when it is known to be valid.
	out, ok := sc.appendObject(buf, params, keep, metaFilter, !valid, p)
	switch {
	case ok:
		return out
	case !jsonrpc.Valid(params):
		return appendInvalid(buf, r.Params)
	}
	return append(buf[:0], Default().(Keyer).Key(r)...) // cannot happen for valid JSON
}

// appendInvalid writes the key of params that are no valid JSON: their
// text as a JSON string.
func appendInvalid(buf []byte, params json.RawMessage) []byte {
	q, _ := json.Marshal(string(params))
	return append(buf, q...)
}

// member is one member of an object being written: its name (unquoted)
// and its value.
type member struct {
	name  []byte
	value []byte
}

// appendObject writes the object raw canonically: the members that keep
// accepts (all when keep is nil), sorted by name (the last of duplicates
// wins, as in encoding/json), without those whose value is an empty object
// once written (as dropEmptyObjects does); with metaFilter, _meta without
// its volatile keys (and without _meta when nothing is left); with check,
// it is false when raw is no valid JSON (else raw is trusted to be). The
// members are sorted on sc.members, as a stack: a nested object's go after
// them. The members on the paths of p are left out.
func (sc *scratch) appendObject(dst, raw []byte, keep func([]byte) bool, metaFilter, check bool, p *pruning) ([]byte, bool) {
	base := len(sc.members)
	defer func() { sc.members = sc.members[:base] }()
	add := func(quoted, value []byte) error {
		name := quoted[1 : len(quoted)-1]
		if !asWritten(name) {
			if bytes.IndexByte(name, '\\') >= 0 {
				s, ok := jsonrpc.Unquote(quoted)
				if !ok {
					return errBadValue
				}
				name = []byte(s)
			}
			if !utf8.Valid(name) { // as decoded: a byte that is no UTF-8 is U+FFFD
				name = []byte(validUTF8(string(name)))
			}
		}
		if keep != nil && !keep(name) || p.drops(name) {
			return nil
		}
		own := sc.members[base:]
		for i := range own {
			if bytes.Equal(own[i].name, name) {
				sc.members = append(sc.members[:base+i], sc.members[base+i+1:]...)
				break
			}
		}
		sc.members = append(sc.members, member{name, value})
		return nil
	}
	var err error
	if check {
		if !jsonrpc.EachMemberValid(raw, func(quoted, value []byte) {
			if err == nil {
				err = add(quoted, value)
			}
		}) {
			return dst, false
		}
	} else {
		err = jsonrpc.EachMemberRaw(raw, add)
	}
	if err != nil {
		return dst, false
	}
	own := sc.members[base:]
	slices.SortFunc(own, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	dst = append(dst, '{')
	n := 0
	for i := range own {
		// Nested objects push on sc.members; a copy of own[i] stays
		// valid when that moves the stack.
		m := own[i]
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = appendName(dst, m.name)
		dst = append(dst, ':')
		var ok bool
		before := len(dst)
		below := p.below(m.name)
		switch {
		case metaFilter && string(m.name) == "_meta" && isObject(m.value):
			dst, ok = sc.appendObject(dst, m.value, func(k []byte) bool { return !volatileMeta(string(k)) }, false, false, below)
		case below != nil && isObject(m.value):
			dst, ok = sc.appendObject(dst, m.value, nil, false, false, below)
		default:
			dst, ok = sc.appendCanonical(dst, m.value)
		}
		if !ok {
			return dst, false
		}
		if string(dst[before:]) == "{}" {
			dst = dst[:mark] // an empty object is the same as none (of _meta: nothing left)
			continue
		}
		n++
	}
	return append(dst, '}'), true
}

// appendName writes a member name as a JSON string.
func appendName(dst, name []byte) []byte {
	for _, c := range name {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return appendString(dst, string(name))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"')
}

// appendCanonical writes one JSON value canonically.
func (sc *scratch) appendCanonical(dst, raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return dst, false
	}
	switch c := raw[0]; {
	case c == '{':
		return sc.appendObject(dst, raw, nil, false, false, nil)
	case c == '[':
		dst = append(dst, '[')
		n := 0
		ok := true
		err := jsonrpc.EachElement(raw, func(v []byte) error {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst, ok = sc.appendCanonical(dst, v)
			if !ok {
				return errBadValue
			}
			return nil
		})
		return append(dst, ']'), err == nil
	case c == '"':
		if asWritten(raw) || bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			return append(dst, raw...), true
		}
		s, ok := jsonrpc.Unquote(raw)
		if !ok {
			return dst, false
		}
		return appendString(dst, s), true
	case c == '-' || c >= '0' && c <= '9':
		if plainInteger(raw) {
			return append(dst, raw...), true
		}
		return append(dst, canonicalNumber(string(raw))...), true
	}
	return append(dst, raw...), true // true, false, null
}

var errBadValue = errorString("bad value")

type errorString string

func (e errorString) Error() string { return string(e) }

// appendString writes s as a JSON string, as encoding/json would (without
// HTML escaping, which does not matter for a key).
func appendString(dst []byte, s string) []byte {
	s = validUTF8(s)
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

// isObject reports whether the JSON value v is an object.
func isObject(v []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) }

// asWritten reports whether b, the inside of a short JSON string (at most
// maxAsWritten bytes), is its text as the key writes it: no escape, no byte
// past ASCII (which might be no UTF-8). One pass where a longer string
// takes two faster ones.
func asWritten(b []byte) bool {
	if len(b) > maxAsWritten {
		return false
	}
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

const maxAsWritten = 64

// validUTF8 is s with each byte that is no UTF-8 replaced by U+FFFD, as
// encoding/json decodes it (and encodes it as "\ufffd", where decoded params
// encode the character itself). strings.ToValidUTF8 replaces a run of such
// bytes with one U+FFFD, where encoding/json gives one a byte.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// pruning is a tree of paths of plain member names (a match config's ignore,
// regex and type paths, when each step is a name: plainPaths) whose
// members a key leaves out, read from the raw params as the config's
// rules are applied to the decoded ones (rules.appendIndexKey): drop are
// the members left out here, under the paths that go deeper.
type pruning struct {
	drop  map[string]bool
	under map[string]*pruning
}

// drops reports whether the member name is left out (p may be nil).
func (p *pruning) drops(name []byte) bool { return p != nil && p.drop[string(name)] }

// below is the pruning of the paths under the member name; nil for none.
func (p *pruning) below(name []byte) *pruning {
	if p == nil {
		return nil
	}
	return p.under[string(name)]
}

// plainPaths returns the pruning of rules, nil when a step of one of them is
// no plain name: a wildcard, "#", or an index (an array's element, which
// the decoded rules remove and a pruning does not).
func plainPaths(rules ...[]pathRule) *pruning {
	root := &pruning{}
	for _, list := range rules {
		for _, r := range list {
			at := root
			for i, seg := range r.segs {
				if seg.all || seg.glob || isIndex(seg.key) {
					return nil
				}
				if i == len(r.segs)-1 {
					if at.drop == nil {
						at.drop = map[string]bool{}
					}
					at.drop[seg.key] = true
					break
				}
				next := at.under[seg.key]
				if next == nil {
					if at.under == nil {
						at.under = map[string]*pruning{}
					}
					next = &pruning{}
					at.under[seg.key] = next
				}
				at = next
			}
		}
	}
	return root
}

// isIndex reports whether a path's step could index an array (remove's
// test).
func isIndex(key string) bool {
	_, err := strconv.Atoi(key)
	return err == nil
}
