package jsonrpc

// Valid reports whether data is one valid JSON value (with surrounding
// white space), as encoding/json's Valid does, several times faster: a
// recursive scan with no state machine.
func Valid(data []byte) bool {
	i, ok := validValue(data, skipSpace(data, 0), 0)
	return ok && skipSpace(data, i) == len(data)
}

// EachMemberValid is Valid for data that begins with '{' (white space
// trimmed) which also calls f with each member, as eachMemberValid does.
func EachMemberValid(data []byte, f func(quoted, value []byte)) bool {
	return len(data) > 0 && data[0] == '{' && eachMemberValid(data, f)
}

// eachMemberValid is Valid for data that begins with '{' (trimmed), which
// also calls f with each member of the object, in order, once the member
// is known to be valid: the key as written (quotes included) and the value,
// sub-slices of data. It reads data once where Valid and then eachMember
// read it twice.
func eachMemberValid(data []byte, f func(quoted, value []byte)) bool {
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == '}' {
		return i+1 == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		ks := i
		var ok bool
		if i, ok = validString(data, i); !ok {
			return false
		}
		ke := i
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		vs := skipSpace(data, i+1)
		if i, ok = validValue(data, vs, 1); !ok {
			return false
		}
		f(data[ks:ke], data[vs:i])
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i+1 == len(data)
		default:
			return false
		}
	}
}

// maxDepth bounds nesting, as encoding/json does (10000).
const maxDepth = 10000

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case (c == '{' || c == '[') && depth >= maxDepth:
		return i, false
	case c == '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = validValue(b, skipSpace(b, i+1), depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return validString(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(b, i)
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		if i = stringRun(b, i); i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}
