package cassettes

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// line is a change as the schema tests compare it.
type line struct {
	Breaking bool
	Kind     string
	Path     string
	Text     string
}

func lines(cs Changes) []line {
	var out []line
	for _, c := range cs {
		out = append(out, line{c.Breaking, c.Kind, c.Path, c.Text})
	}
	return out
}

func decodeTool(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// TestSchemaDiff: each difference of two tool definitions is one change,
// nested properties and items included, breaking by the side of the schema:
// an input that refuses what it accepted, an output that may hold what it
// ruled out.
func TestSchemaDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []line
	}{
		{"same", `{"inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}`,
			`{"inputSchema":{"properties":{"a":{"type":"number"}},"type":"object"}}`, nil},
		{"newly required", `{"inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}`,
			`{"inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}}`,
			[]line{{true, KindRequired, "a", `tool t: argument "a" is now required`}}},
		{"new required argument", `{"inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}}`,
			`{"inputSchema":{"type":"object","properties":{"a":{"type":"number"},"c":{"type":"string"}},"required":["a","c"]}}`,
			[]line{{true, KindRequired, "c", `tool t: argument "c" is now required (new, of type "string")`}}},
		{"no longer required", `{"inputSchema":{"type":"object","properties":{"a":{}},"required":["a"]}}`,
			`{"inputSchema":{"type":"object","properties":{"a":{}}}}`,
			[]line{{false, KindNotRequired, "a", `tool t: argument "a" is no longer required`}}},
		{"optional added", `{"inputSchema":{"type":"object"}}`,
			`{"inputSchema":{"type":"object","properties":{"units":{"type":"string"}}}}`,
			[]line{{false, KindPropAdded, "units", `tool t: optional argument "units" was added`}}},
		{"required removed", `{"inputSchema":{"type":"object","properties":{"a":{}},"required":["a"]}}`,
			`{"inputSchema":{"type":"object"}}`,
			[]line{
				{true, KindPropRemoved, "a", `tool t: argument "a" was removed (it was required)`},
			}},
		{"optional removed", `{"inputSchema":{"type":"object","properties":{"a":{}}}}`,
			`{"inputSchema":{"type":"object"}}`,
			[]line{{false, KindPropRemoved, "a", `tool t: argument "a" was removed`}}},
		{"optional removed, others refused", `{"inputSchema":{"type":"object","properties":{"a":{}},"additionalProperties":false}}`,
			`{"inputSchema":{"type":"object","additionalProperties":false}}`,
			[]line{{true, KindPropRemoved, "a", `tool t: argument "a" was removed (and other properties are refused)`}}},
		{"type changed", `{"inputSchema":{"properties":{"a":{"type":"number"}}}}`,
			`{"inputSchema":{"properties":{"a":{"type":"string"}}}}`,
			[]line{{true, KindType, "a", `tool t: argument "a" changed type from "number" to "string"`}}},
		{"input widened", `{"inputSchema":{"properties":{"a":{"type":"integer"}}}}`,
			`{"inputSchema":{"properties":{"a":{"type":["number","null"]}}}}`,
			[]line{{false, KindType, "a", `tool t: argument "a" changed type from "integer" to ["number","null"]`}}},
		{"output widened", `{"outputSchema":{"properties":{"a":{"type":"integer"}}}}`,
			`{"outputSchema":{"properties":{"a":{"type":"number"}}}}`,
			[]line{{true, KindType, "a", `tool t: output field "a" changed type from "integer" to "number"`}}},
		{"output narrowed", `{"outputSchema":{"properties":{"a":{"type":["string","null"]}}}}`,
			`{"outputSchema":{"properties":{"a":{"type":"string"}}}}`,
			[]line{{false, KindType, "a", `tool t: output field "a" changed type from ["string","null"] to "string"`}}},
		{"nested", `{"inputSchema":{"properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}}}}}`,
			`{"inputSchema":{"properties":{"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}},"required":["city","zip"]}}}}`,
			[]line{
				{true, KindRequired, "address.city", `tool t: argument "address.city" is now required`},
				{true, KindRequired, "address.zip", `tool t: argument "address.zip" is now required (new, of type "string")`},
			}},
		{"items", `{"inputSchema":{"properties":{"tags":{"type":"array","items":{"type":"object","properties":{"id":{"type":"number"}}}}}}}`,
			`{"inputSchema":{"properties":{"tags":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}}}}}}}`,
			[]line{{true, KindType, "tags[].id", `tool t: argument "tags[].id" changed type from "number" to "string"`}}},
		{"enum narrowed", `{"inputSchema":{"properties":{"u":{"enum":["c","f"]}}}}`,
			`{"inputSchema":{"properties":{"u":{"enum":["c"]}}}}`,
			[]line{{true, KindEnum, "u", `tool t: argument "u": the allowed values changed from ["c","f"] to ["c"]`}}},
		{"enum widened", `{"inputSchema":{"properties":{"u":{"enum":["c"]}}}}`,
			`{"inputSchema":{"properties":{"u":{"enum":["c","f"]}}}}`,
			[]line{{false, KindEnum, "u", `tool t: argument "u": the allowed values changed from ["c"] to ["c","f"]`}}},
		{"output enum widened", `{"outputSchema":{"properties":{"u":{"enum":["c"]}}}}`,
			`{"outputSchema":{"properties":{"u":{"enum":["c","f"]}}}}`,
			[]line{{true, KindEnum, "u", `tool t: output field "u": the allowed values changed from ["c"] to ["c","f"]`}}},
		{"output field removed", `{"outputSchema":{"properties":{"temp":{"type":"number"},"sky":{"type":"string"}},"required":["temp"]}}`,
			`{"outputSchema":{"properties":{"temp":{"type":"number"}}}}`,
			[]line{
				{true, KindPropRemoved, "sky", `tool t: output field "sky" was removed`},
				{true, KindNotRequired, "temp", `tool t: output field "temp" is no longer required`},
			}},
		{"output field added", `{"outputSchema":{"properties":{}}}`,
			`{"outputSchema":{"properties":{"x":{"type":"string"}},"required":["x"]}}`,
			[]line{{false, KindRequired, "x", `tool t: output field "x" is now required (new, of type "string")`}}},
		{"output schema removed", `{"outputSchema":{"type":"object"}}`, `{}`,
			[]line{{true, KindSchemaRemoved, "", `tool t: the output schema was removed (structured content may be gone)`}}},
		{"output schema added", `{}`, `{"outputSchema":{"type":"object"}}`,
			[]line{{false, KindSchemaAdded, "", `tool t: it now has an output schema`}}},
		{"keywords", `{"inputSchema":{"properties":{"n":{"type":"number","minimum":0,"description":"how many"}}}}`,
			`{"inputSchema":{"properties":{"n":{"type":"number","minimum":1,"description":"how many, at least one"}}}}`,
			[]line{
				{false, KindDescription, "n", `tool t: argument "n": the description changed from "how many" to "how many, at least one"`},
				{false, KindKeyword, "n minimum", `tool t: argument "n": "minimum" changed from 0 to 1`},
			}},
		{"refuses other properties", `{"inputSchema":{"type":"object"}}`, `{"inputSchema":{"type":"object","additionalProperties":false}}`,
			[]line{{true, KindKeyword, "additionalProperties", `tool t: the input schema: "additionalProperties" changed from none to false`}}},
		{"root type", `{"inputSchema":{"type":"object"}}`, `{"inputSchema":{"type":"array"}}`,
			[]line{{true, KindType, "", `tool t: the input schema changed type from "object" to "array"`}}},
		{"description and annotations", `{"description":"Adds","annotations":{"readOnlyHint":true}}`,
			`{"description":"Sums","title":"Sum","annotations":{"readOnlyHint":false,"destructiveHint":false},"icons":[{"src":"x.png"}],"_meta":{"x":1}}`,
			[]line{
				{false, KindDescription, "", `tool t: the description changed from "Adds" to "Sums"`},
				{false, KindTitle, "", `tool t: the title changed from none to "Sum"`},
				{false, KindAnnotations, "destructiveHint", `tool t: annotation destructiveHint changed from none to false`},
				{false, KindAnnotations, "readOnlyHint", `tool t: annotation readOnlyHint changed from true to false`},
				{false, KindToolMember, "icons", `tool t: icons changed from none to [{"src":"x.png"}]`},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &differ{}
			d.tool("t", decodeTool(t, tt.old), decodeTool(t, tt.new))
			if diff := cmp.Diff(tt.want, lines(d.changes)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}
