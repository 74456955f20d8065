package replayer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// This file is the JSON half of the transcript harness
// (transcript_test.go): values decoded with their members' order kept (so
// that -update writes the server's messages as the server wrote them),
// compared as JSON values, with placeholders for ids the replay makes up.

// jobject is a JSON object that keeps the order of its members.
type jobject struct {
	keys []string
	vals map[string]any
}

// decodeJSON decodes one JSON value: objects as *jobject, arrays as []any,
// numbers as json.Number (exact, whatever their size), strings, booleans
// and nil.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &jobject{vals: map[string]any{}}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := o.vals[key]; !dup {
				o.keys = append(o.keys, key)
			}
			o.vals[key] = v
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

// encodeJSON writes v compactly, members in their order, with <, > and &
// as they are.
func encodeJSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case *jobject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeJSON(b, v.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("writeJSON: %T", v))
	}
}

func writeString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// plain turns v into maps, for cmp.Diff.
func plain(v any) any {
	switch v := v.(type) {
	case *jobject:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plain(v.vals[k])
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	}
	return v
}

// bindings are the values that placeholders stand for.
type bindings map[string]any

func (b bindings) clone() bindings {
	c := make(bindings, len(b))
	for k, v := range b {
		c[k] = v
	}
	return c
}

// placeholder reports whether v is a placeholder ("$name": a $ then a
// letter or _, then letters, digits or _) and its name. "$$..." is the
// literal string "$..." (lit).
func placeholder(v any) (name, lit string, isPlaceholder, isEscape bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "$") {
		return "", "", false, false
	}
	if strings.HasPrefix(s, "$$") {
		return "", s[1:], false, true
	}
	for i, r := range s[1:] {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return "", "", false, false
		}
	}
	return s[1:], "", len(s) > 1, false
}

// matchLine reports whether a server message got is the one a server line
// describes: as match, but the responses of a batch may come in any order
// (JSON-RPC 2.0: the client matches them by id).
func matchLine(want, got any, subset bool, b bindings) bool {
	w, ok := want.([]any)
	g, ok2 := got.([]any)
	if !ok || !ok2 || len(w) != len(g) {
		return match(want, got, subset, b)
	}
	return batchOrder(w, g, subset, b) != nil
}

// batchOrder returns got's elements in the order of want's that they match
// (each used once), binding placeholders in b; nil when there is none.
func batchOrder(want, got []any, subset bool, b bindings) []any {
	if len(want) == 0 {
		return []any{}
	}
	for i, g := range got {
		try := b.clone()
		if !match(want[0], g, subset, try) {
			continue
		}
		rest := append(append([]any(nil), got[:i]...), got[i+1:]...)
		if tail := batchOrder(want[1:], rest, subset, try); tail != nil {
			for k, v := range try {
				b[k] = v
			}
			return append([]any{g}, tail...)
		}
	}
	return nil
}

// match reports whether got is the value want describes, binding want's
// unbound placeholders in b (which it changes only when got matches a
// placeholder: callers try a clone). With subset, objects of want need only
// some of got's members.
func match(want, got any, subset bool, b bindings) bool {
	if name, lit, ok, esc := placeholder(want); ok {
		if v, bound := b[name]; bound {
			return match(v, got, false, bindings{})
		}
		switch got.(type) {
		case string, json.Number:
		default:
			return false
		}
		for _, v := range b {
			if match(v, got, false, bindings{}) {
				return false // two names, two values
			}
		}
		b[name] = got
		return true
	} else if esc {
		return got == lit
	}
	switch w := want.(type) {
	case *jobject:
		g, ok := got.(*jobject)
		if !ok || (!subset && len(g.keys) != len(w.keys)) {
			return false
		}
		for _, k := range w.keys {
			gv, ok := g.vals[k]
			if !ok || !match(w.vals[k], gv, subset, b) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !match(w[i], g[i], subset, b) {
				return false
			}
		}
		return true
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(w.String())
		y, oky := new(big.Rat).SetString(g.String())
		return okx && oky && x.Cmp(y) == 0
	}
	return want == got
}

// substitute replaces the placeholders of a client line with what they
// were bound to, and "$$..." with "$...".
func substitute(v any, b bindings) (any, error) {
	if name, lit, ok, esc := placeholder(v); ok {
		bound, ok := b[name]
		if !ok {
			return nil, fmt.Errorf("$%s is not bound: no earlier < line has it where the server's message has a value", name)
		}
		return bound, nil
	} else if esc {
		return lit, nil
	}
	switch v := v.(type) {
	case *jobject:
		o := &jobject{keys: v.keys, vals: make(map[string]any, len(v.keys))}
		for _, k := range v.keys {
			s, err := substitute(v.vals[k], b)
			if err != nil {
				return nil, err
			}
			o.vals[k] = s
		}
		return o, nil
	case []any:
		a := make([]any, len(v))
		for i := range v {
			s, err := substitute(v[i], b)
			if err != nil {
				return nil, err
			}
			a[i] = s
		}
		return a, nil
	}
	return v, nil
}

// restoreLine is got written as a server line for -update (see restore);
// a batch keeps the order of the old line where its elements still match.
func restoreLine(want, got any, subset bool, b bindings) any {
	if w, ok := want.([]any); ok {
		if g, ok := got.([]any); ok && len(w) == len(g) {
			if ordered := batchOrder(w, g, subset, b.clone()); ordered != nil {
				got = ordered
			}
		}
	}
	return restore(want, got, subset, b)
}

// restore is got written as a server line for -update: where the old line
// want had a placeholder at the same place, the placeholder stays (and is
// bound in b), and a subset line keeps only its own members.
func restore(want, got any, subset bool, b bindings) any {
	if name, _, ok, _ := placeholder(want); ok {
		if _, bound := b[name]; !bound {
			b[name] = got
		}
		return want
	}
	switch w := want.(type) {
	case *jobject:
		g, ok := got.(*jobject)
		if !ok {
			return got
		}
		keys := g.keys
		if subset {
			keys = nil
			for _, k := range w.keys {
				if _, ok := g.vals[k]; ok {
					keys = append(keys, k)
				}
			}
		}
		o := &jobject{keys: keys, vals: make(map[string]any, len(keys))}
		for _, k := range keys {
			if wv, ok := w.vals[k]; ok {
				o.vals[k] = restore(wv, g.vals[k], subset, b)
			} else {
				o.vals[k] = g.vals[k]
			}
		}
		return o
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		a := make([]any, len(g))
		for i := range g {
			a[i] = restore(w[i], g[i], subset, b)
		}
		return a
	}
	return got
}
