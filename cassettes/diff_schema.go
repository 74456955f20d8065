package cassettes

// diff_schema.go: two JSON Schemas of one tool compared property by
// property, and each difference classified by the side of the schema.
//
// An inputSchema says what a client may send: a new schema breaks a client
// when it refuses what the old one accepted (a newly required argument, a
// type or enum value no longer accepted, a required argument gone). An
// outputSchema says what a client will receive: a new schema breaks a
// client when it allows what the old one ruled out (a field gone or no
// longer required, a type or enum value the client never saw).

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// schemaDiff compares the input or output schemas of one tool.
type schemaDiff struct {
	d      *differ
	tool   string
	schema string // "inputSchema" or "outputSchema"
	input  bool
}

// subject names the place of a schema: `argument "a.b"`, `output field
// "x"`, or the schema itself.
func (s *schemaDiff) subject(path string) string {
	switch {
	case path == "" && s.input:
		return "the input schema"
	case path == "":
		return "the output schema"
	case s.input:
		return fmt.Sprintf("argument %q", path)
	}
	return fmt.Sprintf("output field %q", path)
}

func (s *schemaDiff) add(breaking bool, kind, path string, old, new any, format string, args ...any) {
	s.d.add(Change{Breaking: breaking, Kind: kind, Tool: s.tool, Schema: s.schema, Path: path,
		Old: rawJSON(old), New: rawJSON(new), Text: "tool " + s.tool + ": " + fmt.Sprintf(format, args...)})
}

// handled are the keywords compare looks into; any other that differs is a
// KindKeyword change.
var handled = []string{"type", "enum", "const", "properties", "required", "items", "additionalProperties", "description", "title", "$schema"}

// compare compares the schemas a and b (nil: absent, which accepts
// anything) at path.
func (s *schemaDiff) compare(path string, a, b map[string]any) {
	s.types(path, a, b)
	s.enums(path, a, b)
	s.properties(path, a, b)
	s.additional(path, a, b)
	ia, okA := a["items"].(map[string]any)
	ib, okB := b["items"].(map[string]any)
	if okA && okB {
		s.compare(joinPath(path, "[]"), ia, ib)
	} else if !jsonEqualValues(a["items"], b["items"]) {
		s.keyword(path, "items", a["items"], b["items"])
	}
	if x, y := a["description"], b["description"]; path != "" && !jsonEqualValues(x, y) {
		s.add(false, KindDescription, path, x, y, "%s: the description changed from %s to %s", s.subject(path), textOf(x), textOf(y))
	}
	for _, k := range sortedNames(union(a, b)) {
		if slices.Contains(handled, k) {
			continue
		}
		if x, y := a[k], b[k]; !jsonEqualValues(x, y) {
			s.keyword(path, k, x, y)
		}
	}
}

// keyword reports another keyword that changed: never breaking, since the
// diff cannot tell whether the client's values still pass a new minimum or
// pattern.
func (s *schemaDiff) keyword(path, k string, x, y any) {
	s.add(false, KindKeyword, strings.TrimSpace(path+" "+k), x, y, "%s: %q changed from %s to %s", s.subject(path), k, textOf(x), textOf(y))
}

// typeSet is the set of JSON types a schema allows; nil for any.
func typeSet(schema map[string]any) []string {
	switch t := schema["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// covers reports whether the set outer holds every value of inner (nil
// holds everything: a schema without "type" or "enum"); for types,
// "number" holds "integer".
func covers(outer, inner []string) bool {
	if outer == nil {
		return true
	}
	if inner == nil {
		return false
	}
	for _, t := range inner {
		if !slices.Contains(outer, t) && (t != "integer" || !slices.Contains(outer, "number")) {
			return false
		}
	}
	return true
}

func (s *schemaDiff) types(path string, a, b map[string]any) {
	ta, tb := typeSet(a), typeSet(b)
	if covers(ta, tb) && covers(tb, ta) {
		return
	}
	breaking := !covers(tb, ta) // the client sends what b refuses
	if !s.input {
		breaking = !covers(ta, tb) // the client receives what a ruled out
	}
	s.add(breaking, KindType, path, a["type"], b["type"], "%s changed type from %s to %s", s.subject(path), typeText(a), typeText(b))
}

// typeText shows a schema's type: its JSON, or any.
func typeText(schema map[string]any) string {
	if t, ok := schema["type"]; ok {
		return short(t, 80)
	}
	return "any"
}

// enumSet is a schema's enum (or const) as canonical JSON values; nil for
// none.
func enumSet(schema map[string]any) []string {
	var vals []any
	if e, ok := schema["enum"].([]any); ok {
		vals = e
	} else if c, ok := schema["const"]; ok {
		vals = []any{c}
	} else {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}

func (s *schemaDiff) enums(path string, a, b map[string]any) {
	ea, eb := enumSet(a), enumSet(b)
	if covers(ea, eb) && covers(eb, ea) {
		return
	}
	breaking := !covers(eb, ea)
	if !s.input {
		breaking = !covers(ea, eb)
	}
	show := func(e []string) string {
		if e == nil {
			return "any value"
		}
		return "[" + strings.Join(e, ",") + "]"
	}
	s.add(breaking, KindEnum, path, enumValue(a), enumValue(b), "%s: the allowed values changed from %s to %s", s.subject(path), show(ea), show(eb))
}

func enumValue(schema map[string]any) any {
	if e, ok := schema["enum"]; ok {
		return e
	}
	return schema["const"]
}

// required returns a schema's required property names.
func required(schema map[string]any) []string {
	list, _ := schema["required"].([]any)
	var out []string
	for _, r := range list {
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (s *schemaDiff) properties(path string, a, b map[string]any) {
	pa, _ := a["properties"].(map[string]any)
	pb, _ := b["properties"].(map[string]any)
	ra, rb := required(a), required(b)
	names := union(pa, pb)
	for _, r := range append(slices.Clone(ra), rb...) {
		names[r] = true
	}
	for _, name := range sortedNames(names) {
		p := joinPath(path, name)
		sa, inA := pa[name]
		sb, inB := pb[name]
		reqA, reqB := slices.Contains(ra, name), slices.Contains(rb, name)
		schemaA, _ := sa.(map[string]any)
		schemaB, _ := sb.(map[string]any)
		switch {
		case inA && !inB && !reqB:
			breaking := !s.input || reqA || b["additionalProperties"] == false
			why := ""
			switch {
			case s.input && reqA:
				why = " (it was required)"
			case s.input && breaking:
				why = " (and other properties are refused)"
			}
			s.add(breaking, KindPropRemoved, p, sa, nil, "%s was removed%s", s.subject(p), why)
			continue
		case !inA && inB && !reqB:
			if s.input {
				s.add(false, KindPropAdded, p, nil, sb, "optional argument %q was added", p)
			} else {
				s.add(false, KindPropAdded, p, nil, sb, "%s was added", s.subject(p))
			}
			continue
		}
		switch {
		case reqB && !reqA:
			what := ""
			if !inA {
				what = fmt.Sprintf(" (new, of type %s)", typeText(schemaB))
			}
			s.add(s.input, KindRequired, p, ra, rb, "%s is now required%s", s.subject(p), what)
		case reqA && !reqB:
			s.add(!s.input, KindNotRequired, p, ra, rb, "%s is no longer required", s.subject(p))
		}
		if inA && inB {
			s.compare(p, schemaA, schemaB)
		}
	}
}

// additional compares additionalProperties: an input that refuses other
// properties where it accepted them breaks a client that sends them.
func (s *schemaDiff) additional(path string, a, b map[string]any) {
	x, y := a["additionalProperties"], b["additionalProperties"]
	if jsonEqualValues(x, y) {
		return
	}
	xa, okA := x.(map[string]any)
	ya, okB := y.(map[string]any)
	if okA && okB {
		s.compare(joinPath(path, "*"), xa, ya)
		return
	}
	breaking := s.input && y == false
	s.add(breaking, KindKeyword, strings.TrimSpace(path+" additionalProperties"), x, y, "%s: %q changed from %s to %s", s.subject(path), "additionalProperties", textOf(x), textOf(y))
}

// jsonEqualValues compares decoded JSON values.
func jsonEqualValues(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
