package matcher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"unicode/utf8"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file shortens large requests for explaining a miss: comparing and
// diffing a megabyte request in full against a recorded one costs tens of
// milliseconds and says no more than its first differences.

// The limits of Abbreviate. The kept part of params is at most about
// AbbrevFanout^AbbrevDepth × AbbrevWhole bytes (166 KB), whatever their
// size; a large request of usual shape (a few arguments, one long array or
// string) shortens to a few hundred bytes.
const (
	// AbbrevWhole is the size, in bytes of JSON text, up to which a value
	// is kept whole.
	AbbrevWhole = 128
	// AbbrevPrefix is how many bytes of a longer string are kept.
	AbbrevPrefix = 48
	// AbbrevFanout is how many elements of a longer array, and members of
	// a longer object, are kept (objects: the first in name order).
	AbbrevFanout = 6
	// AbbrevDepth is the nesting depth (the members of params are at depth
	// 1) from which a longer array or object is summarized as a whole.
	AbbrevDepth = 4
)

// Abbreviate returns r with its params in canonical form (members sorted,
// numbers canonical, no space) and every value longer than AbbrevWhole
// shortened: a string to its first AbbrevPrefix bytes followed by
// "…(N bytes, #H)", an array to its first AbbrevFanout elements followed by
// the string "…(N more elements, #H)", an object to its first AbbrevFanout
// members followed by the member "…": "N more members, #H", and from depth
// AbbrevDepth on an array or object to that marker alone. H is a hash of
// the canonical JSON of what was cut, so that two values abbreviate alike
// exactly when they are equal as JSON (up to a 48-bit hash collision), and
// a type rule or placeholder still sees an array as an array. cut reports
// whether anything was shortened. Params that are not valid JSON are
// returned as they are.
func Abbreviate(r Request) (short Request, cut bool) {
	params := bytes.TrimSpace(r.Params)
	if len(params) == 0 || !json.Valid(params) {
		return r, false
	}
	a := abbreviator{sc: scratches.Get().(*scratch)}
	defer func() {
		if cap(a.sc.buf) <= maxScratch {
			scratches.Put(a.sc)
		}
	}()
	out, ok := a.value(nil, params, 0)
	if !ok {
		return r, false
	}
	return Request{Method: r.Method, Params: out}, a.cut
}

type abbreviator struct {
	sc  *scratch
	cut bool
}

// value writes the abbreviation of one valid JSON value.
func (a *abbreviator) value(dst, raw []byte, depth int) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) <= AbbrevWhole {
		return a.sc.appendCanonical(dst, raw)
	}
	switch raw[0] {
	case '"':
		s, ok := jsonrpc.Unquote(raw)
		if !ok {
			return dst, false
		}
		if len(s) <= AbbrevWhole {
			return appendString(dst, s), true // long only by its escapes
		}
		a.cut = true
		h := hashOf([]byte(s))
		return appendString(dst, fmt.Sprintf("%s…(%d bytes, #%s)", prefix(s, AbbrevPrefix), len(s), h)), true
	case '[':
		return a.array(dst, raw, depth)
	case '{':
		return a.object(dst, raw, depth)
	}
	// A number of more than AbbrevWhole digits.
	n := CanonicalNumber(string(raw))
	if len(n) <= AbbrevWhole {
		return append(dst, n...), true
	}
	a.cut = true
	return appendString(dst, fmt.Sprintf("…(a number of %d characters, #%s)", len(n), hashOf([]byte(n)))), true
}

func (a *abbreviator) array(dst, raw []byte, depth int) ([]byte, bool) {
	var elems [][]byte
	if err := jsonrpc.EachElement(raw, func(v []byte) error { elems = append(elems, v); return nil }); err != nil {
		return dst, false
	}
	keep := AbbrevFanout
	if depth >= AbbrevDepth {
		keep = 0
	}
	dst = append(dst, '[')
	for i, v := range elems[:min(keep, len(elems))] {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = a.value(dst, v, depth+1); !ok {
			return dst, false
		}
	}
	if rest := elems[min(keep, len(elems)):]; len(rest) > 0 {
		a.cut = true
		h := fnv.New64a()
		for _, v := range rest {
			if !a.hashCanonical(h, v) {
				return dst, false
			}
		}
		if keep > 0 {
			dst = append(dst, ',')
		}
		more := "more "
		if keep == 0 {
			more = ""
		}
		dst = appendString(dst, fmt.Sprintf("…(%d %selements, #%012x)", len(rest), more, h.Sum64()>>16))
	}
	return append(dst, ']'), true
}

func (a *abbreviator) object(dst, raw []byte, depth int) ([]byte, bool) {
	type member struct {
		name  string
		value []byte
	}
	var members []member
	err := jsonrpc.EachMemberRaw(raw, func(quoted, value []byte) error {
		name, ok := jsonrpc.Unquote(quoted)
		if !ok {
			return errBadValue
		}
		// The last of duplicates wins, as in encoding/json.
		members = slices.DeleteFunc(members, func(m member) bool { return m.name == name })
		members = append(members, member{name, value})
		return nil
	})
	if err != nil {
		return dst, false
	}
	slices.SortFunc(members, func(x, y member) int {
		switch {
		case x.name < y.name:
			return -1
		case x.name > y.name:
			return 1
		}
		return 0
	})
	keep := AbbrevFanout
	if depth >= AbbrevDepth {
		keep = 0
	}
	dst = append(dst, '{')
	for i, m := range members[:min(keep, len(members))] {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.name)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = a.value(dst, m.value, depth+1); !ok {
			return dst, false
		}
	}
	if rest := members[min(keep, len(members)):]; len(rest) > 0 {
		a.cut = true
		h := fnv.New64a()
		for _, m := range rest {
			h.Write(appendString(nil, m.name))
			if !a.hashCanonical(h, m.value) {
				return dst, false
			}
		}
		if keep > 0 {
			dst = append(dst, ',')
		}
		more := "more "
		if keep == 0 {
			more = ""
		}
		dst = appendString(dst, "…")
		dst = append(dst, ':')
		dst = appendString(dst, fmt.Sprintf("%d %smembers, #%012x", len(rest), more, h.Sum64()>>16))
	}
	return append(dst, '}'), true
}

// hashCanonical adds the canonical JSON of raw to h, then a separator.
func (a *abbreviator) hashCanonical(h interface{ Write([]byte) (int, error) }, raw []byte) bool {
	buf, ok := a.sc.appendCanonical(a.sc.buf[:0], raw)
	a.sc.buf = buf[:0]
	h.Write(buf)
	h.Write([]byte{0})
	return ok
}

// hashOf is the 48-bit hash that Abbreviate shows, in hex.
func hashOf(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%012x", h.Sum64()>>16)
}

// prefix is the first at most n bytes of s, cut at a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
