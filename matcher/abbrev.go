package matcher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
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
	// AbbrevWhole is the size, in bytes of canonical JSON, up to which a value
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
	// The canonical text first: then the size of a value, and what is
	// hashed of it, depend on the value only, not on how it was written.
	sc := scratches.Get().(*scratch)
	canon, ok := sc.appendCanonical(make([]byte, 0, len(params)), params)
	scratches.Put(sc)
	if !ok {
		return r, false
	}
	a := abbreviator{}
	out, ok := a.value(make([]byte, 0, min(len(canon), 4<<10)), canon, 0)
	if !ok {
		return r, false
	}
	return Request{Method: r.Method, Params: out}, a.cut
}

type abbreviator struct {
	cut bool
}

// value writes the abbreviation of one value in canonical form.
func (a *abbreviator) value(dst, raw []byte, depth int) ([]byte, bool) {
	if len(raw) <= AbbrevWhole {
		return append(dst, raw...), true
	}
	switch raw[0] {
	case '"':
		s, ok := jsonrpc.Unquote(raw)
		if !ok {
			return dst, false
		}
		a.cut = true
		return appendString(dst, fmt.Sprintf("%s…(%d bytes, #%s)", prefix(s, AbbrevPrefix), len(s), hashOf(raw))), true
	case '[':
		return a.array(dst, raw, depth)
	case '{':
		return a.object(dst, raw, depth)
	}
	// A number of more than AbbrevWhole characters.
	a.cut = true
	return appendString(dst, fmt.Sprintf("…(a number of %d characters, #%s)", len(raw), hashOf(raw))), true
}

func (a *abbreviator) array(dst, raw []byte, depth int) ([]byte, bool) {
	keep := AbbrevFanout
	if depth >= AbbrevDepth {
		keep = 0
	}
	h := fnv.New64a()
	n, rest := 0, 0
	dst = append(dst, '[')
	err := jsonrpc.EachElement(raw, func(v []byte) error {
		if n++; n <= keep {
			if n > 1 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = a.value(dst, v, depth+1); !ok {
				return errBadValue
			}
			return nil
		}
		rest++
		h.Write(v)
		h.Write([]byte{','})
		return nil
	})
	if err != nil {
		return dst, false
	}
	if rest > 0 {
		a.cut = true
		more := "more "
		if keep == 0 {
			more = ""
		} else {
			dst = append(dst, ',')
		}
		dst = appendString(dst, fmt.Sprintf("…(%d %selements, #%012x)", rest, more, h.Sum64()>>16))
	}
	return append(dst, ']'), true
}

func (a *abbreviator) object(dst, raw []byte, depth int) ([]byte, bool) {
	keep := AbbrevFanout
	if depth >= AbbrevDepth {
		keep = 0
	}
	h := fnv.New64a()
	n, rest := 0, 0
	dst = append(dst, '{')
	// Canonical: the members are sorted by name, without duplicates.
	err := jsonrpc.EachMemberRaw(raw, func(quoted, value []byte) error {
		if n++; n <= keep {
			if n > 1 {
				dst = append(dst, ',')
			}
			dst = append(append(dst, quoted...), ':')
			var ok bool
			if dst, ok = a.value(dst, value, depth+1); !ok {
				return errBadValue
			}
			return nil
		}
		rest++
		h.Write(quoted)
		h.Write([]byte{':'})
		h.Write(value)
		h.Write([]byte{','})
		return nil
	})
	if err != nil {
		return dst, false
	}
	if rest > 0 {
		a.cut = true
		more := "more "
		if keep == 0 {
			more = ""
		} else {
			dst = append(dst, ',')
		}
		dst = appendString(dst, "…")
		dst = append(dst, ':')
		dst = appendString(dst, fmt.Sprintf("%d %smembers, #%012x", rest, more, h.Sum64()>>16))
	}
	return append(dst, '}'), true
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
