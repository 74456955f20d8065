package matcher

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/match"
)

// A path is the subset of gjson path syntax that makes sense for choosing
// places in a request's params: keys separated by dots ("arguments.city"),
// a backslash escaping a special character so that it is part of the key
// ("_meta.com\.example\.nonce"), an array index ("items.0"), "#" for every
// element of an array ("items.#.id"), and "*" and "?" wildcards in a key
// ("arguments.x-*"). gjson's queries, modifiers and pipes are refused.

// errPath is wrapped by every path syntax error.
var errPath = errors.New("bad path")

// segment is one step of a parsed path.
type segment struct {
	key  string // the unescaped key (or index, or pattern)
	all  bool   // "#": every element of an array
	glob bool   // key holds unescaped wildcards; pattern is the gjson pattern
	pat  string // the pattern as written (escapes kept), for tidwall/match
}

// parsePath splits a gjson path into segments.
func parsePath(p string) ([]segment, error) {
	if p == "" {
		return nil, fmt.Errorf("%w: empty path", errPath)
	}
	var segs []segment
	var key, pat strings.Builder
	glob := false
	flush := func() error {
		if key.Len() == 0 && pat.Len() == 0 {
			return fmt.Errorf("%w %q: empty key (two dots, or a dot at an end)", errPath, p)
		}
		s := segment{key: key.String(), glob: glob, pat: pat.String()}
		if s.pat == "#" {
			s = segment{all: true}
		}
		segs = append(segs, s)
		key.Reset()
		pat.Reset()
		glob = false
		return nil
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return nil, fmt.Errorf("%w %q: a backslash at the end escapes nothing", errPath, p)
			}
			i++
			key.WriteByte(p[i])
			pat.WriteByte('\\')
			pat.WriteByte(p[i])
		case '.':
			if err := flush(); err != nil {
				return nil, err
			}
		case '*', '?':
			glob = true
			key.WriteByte(c)
			pat.WriteByte(c)
		case '|':
			return nil, fmt.Errorf("%w %q: pipes are not supported in match paths", errPath, p)
		case '@':
			if key.Len() == 0 {
				return nil, fmt.Errorf("%w %q: modifiers (@...) are not supported in match paths; escape a literal @ as \\@", errPath, p)
			}
			key.WriteByte(c)
			pat.WriteByte(c)
		case '#':
			if key.Len() != 0 || (i+1 < len(p) && p[i+1] != '.') {
				return nil, fmt.Errorf("%w %q: queries (#(...)) are not supported in match paths; use # alone for every element, or escape a literal # as \\#", errPath, p)
			}
			key.WriteByte(c)
			pat.WriteByte(c)
		default:
			key.WriteByte(c)
			pat.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return segs, nil
}

// found is one value that a path reaches.
type found struct {
	path string // the concrete gjson path (escaped keys, indexes)
	segs []segment
	val  any
}

// lookup returns the values that segs reach in tree, in a stable order
// (object keys sorted), and whether a path without wildcards is absent.
func lookup(tree any, segs []segment) []found {
	var out []found
	var walk func(v any, rest []segment, path string, conc []segment)
	walk = func(v any, rest []segment, path string, conc []segment) {
		if len(rest) == 0 {
			out = append(out, found{path: path, segs: conc, val: v})
			return
		}
		s := rest[0]
		step := func(child any, key string) {
			c := append(conc[:len(conc):len(conc)], segment{key: key})
			walk(child, rest[1:], joinPath(path, key), c)
		}
		switch x := v.(type) {
		case map[string]any:
			if s.all {
				return
			}
			if !s.glob {
				if child, ok := x[s.key]; ok {
					step(child, s.key)
				}
				return
			}
			for _, k := range sortedKeys(x) {
				if match.Match(k, s.pat) {
					step(x[k], k)
				}
			}
		case []any:
			if s.all {
				for i, e := range x {
					step(e, strconv.Itoa(i))
				}
				return
			}
			if n, err := strconv.Atoi(s.key); err == nil && !s.glob && n >= 0 && n < len(x) {
				step(x[n], s.key)
			}
		}
	}
	walk(tree, segs, "", nil)
	return out
}

// remove deletes every value that segs reach in tree. An array element is
// removed by shrinking the array.
func remove(tree any, segs []segment) any {
	if len(segs) == 0 {
		return nil
	}
	s := segs[0]
	switch x := tree.(type) {
	case map[string]any:
		if s.all {
			return x
		}
		for k, child := range x {
			if (s.glob && match.Match(k, s.pat)) || (!s.glob && k == s.key) {
				if len(segs) == 1 {
					delete(x, k)
				} else {
					x[k] = remove(child, segs[1:])
				}
			}
		}
		return x
	case []any:
		if s.all {
			if len(segs) == 1 {
				return []any{}
			}
			for i, e := range x {
				x[i] = remove(e, segs[1:])
			}
			return x
		}
		n, err := strconv.Atoi(s.key)
		if err != nil || s.glob || n < 0 || n >= len(x) {
			return x
		}
		if len(segs) == 1 {
			return append(x[:n:n], x[n+1:]...)
		}
		x[n] = remove(x[n], segs[1:])
		return x
	}
	return tree
}

// update replaces every value that segs reach with f(value).
func update(tree any, segs []segment, f func(any) any) any {
	if len(segs) == 0 {
		return f(tree)
	}
	s := segs[0]
	switch x := tree.(type) {
	case map[string]any:
		if s.all {
			return x
		}
		for k, child := range x {
			if (s.glob && match.Match(k, s.pat)) || (!s.glob && k == s.key) {
				x[k] = update(child, segs[1:], f)
			}
		}
	case []any:
		if s.all {
			for i, e := range x {
				x[i] = update(e, segs[1:], f)
			}
			return x
		}
		if n, err := strconv.Atoi(s.key); err == nil && !s.glob && n >= 0 && n < len(x) {
			x[n] = update(x[n], segs[1:], f)
		}
	}
	return tree
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
