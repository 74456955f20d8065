package toolschema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStructuredProblem: a structuredContent is held to the compiled
// outputSchema as jsonschema.UnmarshalJSON's value would be (numbers exact),
// and the Cache compiles a tool's schema again only when its text changed.
func TestStructuredProblem(t *testing.T) {
	c := NewCache("output")
	raw := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993},"tags":{"type":"array","items":{"type":"string"}}},"required":["n"]}`)
	s, err := c.Get("count", raw)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Get("count", raw); again != s {
		t.Errorf("the same schema text was compiled again")
	}
	if other, _ := c.Get("count", json.RawMessage(`{"type":"object"}`)); other == s {
		t.Errorf("a changed schema was not compiled again")
	}
	for _, tc := range []struct{ structured, want string }{
		{`{"n":9007199254740993,"tags":["a"]}`, ""},
		{`{"n":9007199254740994}`, "maximum"},
		{`{"n":1.5}`, "/n: got number, want integer"},
		{`{"tags":[1]}`, "missing property 'n'"},
		{`null`, "has no structuredContent"},
		{``, "has no structuredContent"},
		{`{"n":`, "is not JSON"},
	} {
		got := StructuredProblem(s, json.RawMessage(tc.structured))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.structured, got, tc.want)
		}
	}
}
