package cassettes

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// walkStrings calls f for every string value of the JSON text data with
// its path (member names and array indexes) and its byte span, quotes
// included. data must be valid JSON.
func walkStrings(data []byte, f func(path []string, start, end int)) {
	w := &walker{data: data, f: f}
	w.value(0, nil)
}

// walkValues is walkStrings that also calls other for every value that is a
// number, an object or an array, with its byte span (an object's or an
// array's after the strings inside it).
func walkValues(data []byte, f, other func(path []string, start, end int)) {
	w := &walker{data: data, f: f, other: other}
	w.value(0, nil)
}

type walker struct {
	data  []byte
	f     func(path []string, start, end int)
	other func(path []string, start, end int) // may be nil
}

func (w *walker) space(i int) int {
	for i < len(w.data) {
		switch w.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end of the string that starts at i.
func (w *walker) str(i int) int {
	for j := i + 1; j < len(w.data); {
		q := bytes.IndexByte(w.data[j:], '"')
		if q < 0 {
			break
		}
		j += q
		// The quote ends the string unless an odd number of backslashes
		// comes before it.
		k := j
		for k > i+1 && w.data[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1
		}
		j++
	}
	return len(w.data)
}

// value walks the value at i and returns where it ends.
func (w *walker) value(i int, path []string) int {
	i = w.space(i)
	if i >= len(w.data) {
		return i
	}
	switch w.data[i] {
	case '"':
		end := w.str(i)
		if len(path) > 0 {
			w.f(path, i, end)
		}
		return end
	case '{':
		start := i
		i = w.space(i + 1)
		for i < len(w.data) && w.data[i] != '}' {
			kend := w.str(i)
			key, _ := jsonrpc.UnquoteView(w.data[i:kend])
			i = w.space(kend)
			if i < len(w.data) && w.data[i] == ':' {
				i++
			}
			// The path is a stack shared by the calls of f, which use it
			// before they return.
			i = w.space(w.value(i, append(path, key)))
			if i < len(w.data) && w.data[i] == ',' {
				i = w.space(i + 1)
			}
		}
		w.done(path, start, i+1)
		return i + 1
	case '[':
		start := i
		i = w.space(i + 1)
		for n := 0; i < len(w.data) && w.data[i] != ']'; n++ {
			i = w.space(w.value(i, append(path, strconv.Itoa(n))))
			if i < len(w.data) && w.data[i] == ',' {
				i = w.space(i + 1)
			}
		}
		w.done(path, start, i+1)
		return i + 1
	}
	start := i
	for i < len(w.data) && !strings.ContainsRune(",}] \t\r\n", rune(w.data[i])) {
		i++
	}
	if c := w.data[start]; c == '-' || c >= '0' && c <= '9' {
		w.done(path, start, i)
	}
	return i
}

// schemaNameMap reports the JSON Schema keywords whose members are named by
// the schema's author (a property called "password"), not by a value's.
func schemaNameMap(keyword string) bool {
	switch keyword {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return true
	}
	return false
}

// done reports a value that is not a string to w.other.
func (w *walker) done(path []string, start, end int) {
	if w.other != nil && len(path) > 0 {
		w.other(path, start, min(end, len(w.data)))
	}
}
