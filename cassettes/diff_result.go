package cassettes

// diff_result.go: two results of one request compared: what changes the
// shape a client reads (breaking) and what only changes values.

import (
	"fmt"
	"strconv"
	"strings"
)

// resultDiff collects the differences of two results.
type resultDiff struct {
	breaking []resultChange // shape: a member gone, a type changed, isError, content types
	other    []resultChange // values, members added
}

type resultChange struct {
	kind, path string
	old, new   any
	text       string
}

// toolCall compares two tools/call results: isError (when it changed,
// that alone is the change), the types of the content blocks in order,
// then structuredContent and any other member as JSON values. Within content blocks of unchanged types only values differ
// (the specification fixes each block type's members).
func (r *resultDiff) toolCall(a, b map[string]any) {
	errA, errB := a["isError"] == true, b["isError"] == true
	switch {
	case !errA && errB:
		// The result became an error: that is the change, whatever else
		// differs (the text of an error is not the text of a result).
		r.breaking = append(r.breaking, resultChange{kind: KindToolError, path: "isError", old: a["isError"], new: true,
			text: "now a tool error: " + textOfContent(b["content"])})
		return
	case errA && !errB:
		r.other = append(r.other, resultChange{kind: KindToolError, path: "isError", old: true, new: b["isError"],
			text: "no longer a tool error"})
		return
	}
	ta, tb := blockTypes(a["content"]), blockTypes(b["content"])
	if strings.Join(ta, ",") != strings.Join(tb, ",") {
		r.breaking = append(r.breaking, resultChange{kind: KindContentTypes, path: "content", old: ta, new: tb,
			text: fmt.Sprintf("the content block types changed from [%s] to [%s]", strings.Join(ta, ", "), strings.Join(tb, ", "))})
	} else {
		shape := len(r.breaking)
		r.walk("content", a["content"], b["content"])
		for _, c := range r.breaking[shape:] {
			r.other = append(r.other, c)
		}
		r.breaking = r.breaking[:shape]
	}
	for _, k := range sortedNames(union(a, b)) {
		if k == "content" || k == "isError" {
			continue
		}
		r.walk(k, a[k], b[k])
	}
}

// textOfContent is the text of a result's first text block, cut short.
func textOfContent(content any) string {
	list, _ := content.([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["type"] == "text" {
			if s, ok := m["text"].(string); ok {
				return strconv.Quote(cut(s, 80))
			}
		}
	}
	return "(no text)"
}

// blockTypes lists the "type" of each content block.
func blockTypes(content any) []string {
	list, _ := content.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		t, _ := asObject(e)["type"].(string)
		if t == "" {
			t = "?"
		}
		out = append(out, t)
	}
	return out
}

// kindOf names the JSON type of a decoded value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// walk compares two values at path: a member gone or a changed type is a
// change of shape, a member added or another value a change of value.
// Array elements are compared by position.
func (r *resultDiff) walk(path string, a, b any) {
	where := path
	if where == "" {
		where = "the result"
	}
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		r.breaking = append(r.breaking, resultChange{kind: KindResultShape, path: path, old: a, new: b,
			text: fmt.Sprintf("%s changed type from %s to %s", where, ka, kb)})
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y := b.(map[string]any)
		keys := sortedNames(union(x, y))
		for _, k := range keys {
			va, inA := x[k]
			vb, inB := y[k]
			p := joinPath(path, k)
			switch {
			case !inB:
				r.breaking = append(r.breaking, resultChange{kind: KindResultShape, path: p, old: va,
					text: fmt.Sprintf("%s went away (it was %s)", p, short(va, 60))})
			case !inA:
				r.other = append(r.other, resultChange{kind: KindResult, path: p, new: vb,
					text: fmt.Sprintf("%s was added: %s", p, short(vb, 60))})
			default:
				r.walk(p, va, vb)
			}
		}
	case []any:
		y := b.([]any)
		for i := range min(len(x), len(y)) {
			r.walk(path+"["+strconv.Itoa(i)+"]", x[i], y[i])
		}
		if len(x) != len(y) {
			r.other = append(r.other, resultChange{kind: KindResult, path: path, old: len(x), new: len(y),
				text: fmt.Sprintf("%s had %d element%s, now %d", where, len(x), plural(len(x)), len(y))})
		}
	default:
		if jsonEqualValues(a, b) {
			return
		}
		was, now := short(a, 60), short(b, 60)
		if x, ok := a.(string); ok {
			was, now = differingPart(x, b.(string))
		}
		r.other = append(r.other, resultChange{kind: KindResult, path: path, old: a, new: b,
			text: fmt.Sprintf("%s was %s, now %s", where, was, now)})
	}
}

// differingPart shows two strings where they begin to differ, quoted: a
// long text that changed in its middle shows that middle ("…at 10:05…"),
// not the start they share.
func differingPart(a, b string) (string, string) {
	const before, width = 20, 60
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-before)
	for from > 0 && !utf8Start(a[from]) {
		from--
	}
	show := func(s string) string {
		part := s[from:]
		out := strconv.Quote(cut(part, width))
		if from > 0 {
			out = `"…` + out[1:]
		}
		return out
	}
	return show(a), show(b)
}
