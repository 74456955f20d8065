package jsonrpc

// ValidAt checks the one JSON value that starts at b[i] (no white space
// before it), as Valid does for a whole document, and returns the offset
// just past it. depth is the value's nesting depth in the document (0 for
// the top level), for the same limit as Valid. On failure the offset is
// where the trouble was found (len(b) when b ends inside the value).
func ValidAt(b []byte, i, depth int) (int, bool) { return validValue(b, i, depth) }

// AppendCompactDocument appends the JSON document b (white space around
// its value allowed) compacted as AppendCompact does, and reports whether
// b is one; dst is returned as it was when it is not.
func AppendCompactDocument(dst, b []byte) ([]byte, bool) {
	out, end, ok := AppendCompact(dst, b, skipSpace(b, 0), 0)
	if !ok || skipSpace(b, end) != len(b) {
		return dst, false
	}
	return out, true
}

// AppendCompact is ValidAt that also appends the value to dst without the
// white space outside its strings: every other byte is kept as written
// (member order, number text, escapes).
func AppendCompact(dst, b []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(b) {
		return dst, i, false
	}
	switch c := b[i]; {
	case (c == '{' || c == '[') && depth >= maxDepth:
		return dst, i, false
	case c == '{':
		dst = append(dst, '{')
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return append(dst, '}'), i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return dst, i, false
			}
			e, ok := validString(b, i)
			if !ok {
				return dst, e, false
			}
			dst = append(dst, b[i:e]...)
			i = skipSpace(b, e)
			if i >= len(b) || b[i] != ':' {
				return dst, i, false
			}
			dst = append(dst, ':')
			if dst, i, ok = AppendCompact(dst, b, skipSpace(b, i+1), depth+1); !ok {
				return dst, i, false
			}
			var closed bool
			if dst, i, closed, ok = appendNext(dst, b, i, '}'); !ok || closed {
				return dst, i, ok
			}
		}
	case c == '[':
		dst = append(dst, '[')
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return append(dst, ']'), i + 1, true
		}
		for {
			var ok bool
			if dst, i, ok = AppendCompact(dst, b, i, depth+1); !ok {
				return dst, i, false
			}
			var closed bool
			if dst, i, closed, ok = appendNext(dst, b, i, ']'); !ok || closed {
				return dst, i, ok
			}
		}
	}
	e, ok := validValue(b, i, depth)
	if ok {
		dst = append(dst, b[i:e]...)
	}
	return dst, e, ok
}

// appendNext reads what follows a member or an element after white space:
// a comma (appended, and the white space after it skipped) or the closing
// bracket (appended; closed is true).
func appendNext(dst, b []byte, i int, closing byte) (_ []byte, _ int, closed, ok bool) {
	i = skipSpace(b, i)
	switch {
	case i >= len(b):
		return dst, i, false, false
	case b[i] == ',':
		return append(dst, ','), skipSpace(b, i+1), false, true
	case b[i] == closing:
		return append(dst, closing), i + 1, true, true
	}
	return dst, i, false, false
}
