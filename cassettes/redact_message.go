package cassettes

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/cassettefile"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/tidwall/gjson"
)

// edit replaces data[start:end] by repl.
type edit struct {
	start, end int
	repl       []byte
}

// message redacts one JSON-RPC message; request says it is a client's
// request, whose secrets become RedactedPlaceholder.
func (rd *Redactor) message(raw json.RawMessage, request bool) (json.RawMessage, int) {
	key := msgKey{unsafeData(raw), len(raw)}
	cached := rd.find == nil && !rd.uncached
	if cached {
		if out, ok := rd.cache[key]; ok {
			if &out[0] == &raw[0] {
				return raw, 0
			}
			return out, 1
		}
	}
	rd.edits = rd.edits[:0]
	whole, anyValue := quotedRedacted, quotedRedacted
	if request {
		whole, anyValue = quotedPlaceholder, quotedAny
	}
	for _, p := range rd.rules.Paths {
		if p == "" || rd.value {
			continue
		}
		res := gjson.GetBytes(raw, p)
		if !res.Exists() {
			continue
		}
		if len(res.Indexes) > 0 {
			for i, r := range res.Array() {
				if idx := res.Indexes[i]; idx > 0 && !isRedacted(r.Raw) {
					rd.edits = append(rd.edits, edit{idx, idx + len(r.Raw), anyValue})
					rd.report(rd.part+" "+p, "path")
				}
			}
			continue
		}
		if res.Index > 0 && !isRedacted(res.Raw) {
			rd.edits = append(rd.edits, edit{res.Index, res.Index + len(res.Raw), anyValue})
			rd.report(rd.part+" "+p, "path")
		}
	}
	// Without escapes, the text of every string is in raw as it is: when
	// raw holds no literal value and no place where a pattern can start,
	// no string does, and only the member names are looked at.
	// (A large message is scanned string by string only.)
	texts := rd.find != nil || len(raw) > 64<<10 || bytes.IndexByte(raw, '\\') >= 0 || rd.mayHoldText(unsafeString(raw))
	// Likewise for member names: most messages hold none that can be a
	// secret's, and then need no walk at all.
	members := rd.mayHoldSecretMember(raw)
	if !texts && !members && len(rd.edits) == 0 {
		if cached {
			rd.cache[key] = raw
		}
		return raw, 0
	}
	where := func(path []string) string { return rd.part + " " + strings.Join(path, ".") }
	walkValues(raw, func(path []string, start, end int) {
		if !rd.value && (path[0] == "jsonrpc" || path[0] == "method") {
			return
		}
		name := ""
		if len(path) > 0 { // a value's own string
			name = path[len(path)-1]
		}
		member := members && rd.secretMember(name)
		if !member && !texts {
			return
		}
		s, ok := jsonrpc.UnquoteView(raw[start:end])
		if !ok || s == Redacted || s == RedactedPlaceholder || s == "{{any}}" {
			return
		}
		if member && s != "" {
			rd.edits = append(rd.edits, edit{start, end, whole})
			if rd.find != nil {
				rd.report(where(path), "member name "+name)
			}
			return
		}
		if !texts {
			return
		}
		save := rd.part
		if rd.find != nil {
			rd.part = where(path)
		}
		out, k := rd.text(s)
		rd.part = save
		if k == 0 {
			return
		}
		if request {
			rd.edits = append(rd.edits, edit{start, end, whole})
			return
		}
		rd.edits = append(rd.edits, edit{start, end, quote(out)})
	}, func(path []string, start, end int) {
		// A number, an object or an array under a secret's name is
		// replaced whole (a password of digits, "credentials": {...}),
		// except in a JSON Schema's map of property names, where the
		// value describes the secret and holds none.
		if !members || !rd.value && path[0] == "jsonrpc" {
			return
		}
		name := path[len(path)-1]
		if !rd.secretMember(name) || len(path) > 1 && schemaNameMap(path[len(path)-2]) {
			return
		}
		rd.edits = append(rd.edits, edit{start, end, whole})
		if rd.find != nil {
			rd.report(where(path), "member name "+name)
		}
	})
	if len(rd.edits) == 0 {
		if cached {
			rd.cache[key] = raw
		}
		return raw, 0
	}
	sort.SliceStable(rd.edits, func(i, j int) bool { return rd.edits[i].start < rd.edits[j].start })
	var b bytes.Buffer
	b.Grow(len(raw))
	last, n := 0, 0
	for _, e := range rd.edits {
		if e.start < last {
			continue // inside a value already replaced
		}
		b.Write(raw[last:e.start])
		b.Write(e.repl)
		last = e.end
		n++
	}
	b.Write(raw[last:])
	out := json.RawMessage(b.Bytes())
	if cached {
		rd.cache[key] = out
	}
	return out, n
}

// The replacements of a whole value, quoted: in a server's message, and
// in a client's request, where a path's value becomes {{any}}.
var (
	quotedRedacted    = []byte(strconv.Quote(Redacted))
	quotedPlaceholder = []byte(strconv.Quote(RedactedPlaceholder))
	quotedAny         = []byte(`"{{any}}"`)
)

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func isRedacted(raw string) bool {
	return raw == strconv.Quote(Redacted) || raw == strconv.Quote(RedactedPlaceholder) || raw == `"{{any}}"`
}

func quote(s string) []byte { return cassettefile.AppendQuoted(nil, s) }

func unsafeData(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}
