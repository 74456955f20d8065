package cassettes

// diff.go: what changed between two cassettes (mcpmock cassette diff), and
// which of those changes break a client. The same comparison serves the
// drift check against a live server (drift.go).

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Change is one difference between an old and a new cassette (or between a
// cassette and a live server's answers: see Drift). Its JSON form is the
// stable shape of `mcpmock cassette diff --json` (docs/diff.md).
type Change struct {
	// Breaking is true when a client that worked with the old cassette may
	// fail with the new one (docs/diff.md says which changes are).
	Breaking bool `json:"breaking"`
	// Kind names what changed, one of the Kind constants.
	Kind string `json:"kind"`
	// Tool is the tool the change is about ("" for none): the tool of a
	// tool change, the called tool of a tools/call interaction.
	Tool string `json:"tool,omitempty"`
	// Schema is "inputSchema" or "outputSchema" for a schema change.
	Schema string `json:"schema,omitempty"`
	// Path is where the change is: a property of a schema ("location",
	// "address.city", "tags[]"; "" for the schema itself), or a place in
	// a result ("structuredContent.temperature", "content[0].text").
	Path string `json:"path,omitempty"`
	// Interaction and NewInteraction are the 1-based numbers of the
	// interaction in the old and in the new cassette (0 where it has none).
	Interaction    int `json:"interaction,omitempty"`
	NewInteraction int `json:"newInteraction,omitempty"`
	// Method is the request's method, Request a short form of it (method,
	// tool and compact arguments), for an interaction change.
	Method  string `json:"method,omitempty"`
	Request string `json:"request,omitempty"`
	// Old and New are the values before and after, as JSON, where one
	// value says it (a description, a type, a required list...).
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
	// Text says the change in one line, with what it is about: `tool add:
	// argument "c" is now required`, `interaction 4: tools/call add
	// {"a":1}: missing from the new cassette`.
	Text string `json:"text"`
}

// The kinds of Change.
const (
	// Tools.
	KindToolAdded     = "tool-added"
	KindToolRemoved   = "tool-removed"
	KindDescription   = "description"    // the tool's description
	KindTitle         = "title"          // the tool's title
	KindAnnotations   = "annotations"    // one annotation (Path names it)
	KindToolMember    = "tool-member"    // another member of the definition (Path names it)
	KindSchemaAdded   = "schema-added"   // the tool has an outputSchema where it had none
	KindSchemaRemoved = "schema-removed" // the tool's outputSchema is gone
	KindRequired      = "required"       // a property became required
	KindNotRequired   = "not-required"   // a property is no longer required
	KindPropAdded     = "property-added" // an optional property was added
	KindPropRemoved   = "property-removed"
	KindType          = "type"
	KindEnum          = "enum"
	KindKeyword       = "keyword" // another keyword of a schema (Path, then the keyword after a space)
	// Interactions.
	KindNew          = "interaction-new"
	KindMissing      = "interaction-missing"
	KindCallFailed   = "call-failed" // Drift only: the live server could not be asked
	KindError        = "error"       // the JSON-RPC error: now fails, no longer fails, another error
	KindToolError    = "tool-error"  // isError of a tools/call result
	KindContentTypes = "content-types"
	KindResultShape  = "result-shape" // a member of the result went away or changed type
	KindResult       = "result"       // the result's values changed
	KindServer       = "server"       // the server's name or version (handshake)
)

// String is Text prefixed with "BREAKING: " or "changed: ": the line that
// cassette diff and cassette verify print.
func (c Change) String() string {
	if c.Breaking {
		return "BREAKING: " + c.Text
	}
	return "changed: " + c.Text
}

// Changes are the changes between two cassettes: the tools' first (by
// name), then the interactions' (in the old cassette's order, the new
// interactions last).
type Changes []Change

// Breaking returns the number of breaking changes.
func (cs Changes) Breaking() int {
	n := 0
	for _, c := range cs {
		if c.Breaking {
			n++
		}
	}
	return n
}

// Diff compares an old cassette with a new one, semantically:
//
//   - tools, gathered from every tools/list result of each cassette (every
//     page, and the lists after notifications/tools/list_changed: a tool
//     listed more than once counts in its last listing): added, removed,
//     description, title, annotations, and the inputSchema and outputSchema
//     property by property, nested properties and items included. Tools are
//     compared only when both cassettes hold a tools/list result;
//   - interactions: each client request of the old cassette is paired with
//     a request of the new one of the same method and equal params, as the
//     default matcher compares them (the JSON-RPC id, the volatile _meta
//     keys and empty objects left out; tools/call by name and arguments,
//     the lists by cursor; the handshake by method), the first unpaired one
//     in recorded order, so reordered interactions are no change. Unpaired
//     ones are missing or new; paired ones compare their answers (the
//     error, isError, the content block types, the result's shape and
//     values, _meta left out). tools/list results are compared as tools.
//
// Scripted interactions, notifications and server-initiated messages are not
// compared. Neither cassette is changed.
func Diff(old, new *Cassette) Changes {
	d := &differ{}
	oldTools, oldListed := toolCatalogue(old)
	newTools, newListed := toolCatalogue(new)
	if oldListed && newListed {
		d.tools(oldTools, newTools)
	}
	d.interactions(requestsOf(old), requestsOf(new))
	return d.changes
}

// differ collects the changes of one Diff.
type differ struct {
	changes Changes
}

func (d *differ) add(c Change) { d.changes = append(d.changes, c) }

// rawJSON marshals v for Change.Old and Change.New; nil for nil, a nil
// slice and JSON null (Old and New are absent then).
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// short writes a decoded JSON value compactly, cut at max bytes with "…".
func short(v any, max int) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return cut(string(b), max)
}

// cut shortens s to at most max bytes (at a rune boundary), marking the cut.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// decodeJSON decodes raw JSON; ok is false when it does not parse.
func decodeJSON(raw []byte) (v any, ok bool) {
	if len(raw) == 0 {
		return nil, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, false
	}
	return v, true
}

// joinPath appends a member name to a path of a JSON value.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	if strings.HasSuffix(name, "]") && strings.HasPrefix(name, "[") {
		return path + name
	}
	return path + "." + name
}
