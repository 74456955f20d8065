package matcher

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestAbbreviate(t *testing.T) {
	long := strings.Repeat("x", 300)
	var elems []string
	for i := range 40 {
		elems = append(elems, fmt.Sprintf(`{"id":%d,"text":"element %d"}`, i, i))
	}
	array := "[" + strings.Join(elems, ",") + "]"
	tests := []struct {
		name, params, want string
		cut                bool
	}{
		{"small: canonical only", `{ "b": 1.0, "a": [1e2] }`, `{"a":[100],"b":1}`, false},
		{"invalid JSON: as it is", `{"a":`, `{"a":`, false},
		{"a long string", `{"s":"` + long + `"}`, `{"s":"` + long[:AbbrevPrefix] + `…(300 bytes, #` + hashOf([]byte(`"`+long+`"`)) + `)"}`, true},
		{"a long array keeps its first elements, as an array", `{"a":` + array + `}`,
			`{"a":[` + strings.Join(elems[:AbbrevFanout], ",") + `,"…(34 more elements, #`, true},
		{"an object of many members keeps the first by name", `{"o":{` + members(10) + `}}`, `{"o":{"m0":"value of member 0","m1":"value of member 1","m2":"value of member 2","m3":"value of member 3","m4":"value of member 4","m5":"value of member 5","…":"4 more members, #`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Abbreviate(Request{Method: "tools/call", Params: json.RawMessage(tt.params)})
			if !strings.HasPrefix(string(got.Params), tt.want) || cut != tt.cut {
				t.Errorf("Abbreviate = %s, %v\nwant %s…, %v", got.Params, cut, tt.want, tt.cut)
			}
			if got.Method != "tools/call" {
				t.Errorf("method %q", got.Method)
			}
			if cut && !json.Valid(got.Params) {
				t.Errorf("not JSON: %s", got.Params)
			}
		})
	}
}

func members(n int) string {
	var ms []string
	for i := n - 1; i >= 0; i-- {
		ms = append(ms, fmt.Sprintf(`"m%d":"value of member %d"`, i, i))
	}
	return strings.Join(ms, ",")
}

// TestAbbreviateAlike: two values abbreviate alike exactly when they are
// equal as JSON, however they are written and wherever they differ.
func TestAbbreviateAlike(t *testing.T) {
	big := func(last string, sep string) string {
		var b strings.Builder
		b.WriteString(`{"docs":[`)
		for i := range 500 {
			fmt.Fprintf(&b, `{"id":%d,%s"body":"document %d"}`+",", i, sep, i)
		}
		b.WriteString(`"` + last + `"],"text":"` + strings.Repeat("y", 500) + last + `"}`)
		return b.String()
	}
	abbr := func(s string) string {
		t.Helper()
		short, cut := Abbreviate(Request{Params: json.RawMessage(s)})
		if !cut {
			t.Fatalf("nothing cut of %d bytes", len(s))
		}
		return string(short.Params)
	}
	a := abbr(big("end", ""))
	if b := abbr(big("end", " ")); a != b {
		t.Errorf("equal values written apart abbreviate differently:\n%s\n%s", a, b)
	}
	if c := abbr(big("END", "")); a == c {
		t.Errorf("values that differ at their end abbreviate alike: %s", a)
	}
	if len(a) > 2000 {
		t.Errorf("%d bytes abbreviate to %d: %s", len(big("end", "")), len(a), a)
	}
}

// TestAbbreviateBound: however wide and deep, params abbreviate to at most
// about AbbrevFanout^AbbrevDepth × AbbrevWhole bytes.
func TestAbbreviateBound(t *testing.T) {
	var tree func(depth int) string
	tree = func(depth int) string {
		if depth == 0 {
			return `"` + strings.Repeat("z", 200) + `"`
		}
		var ms []string
		for i := range AbbrevFanout + 1 {
			ms = append(ms, fmt.Sprintf(`"k%d":%s`, i, tree(depth-1)))
		}
		return "{" + strings.Join(ms, ",") + "}"
	}
	params := tree(AbbrevDepth + 1)
	short, cut := Abbreviate(Request{Params: json.RawMessage(params)})
	limit := 1
	for range AbbrevDepth {
		limit *= AbbrevFanout
	}
	limit *= AbbrevWhole
	if !cut || len(short.Params) > limit || !json.Valid(short.Params) {
		t.Errorf("%d bytes abbreviate to %d (cut %v), want at most %d", len(params), len(short.Params), cut, limit)
	}
}

func ExampleAbbreviate() {
	long := `"` + strings.Repeat("lorem ipsum ", 100) + `"`
	short, cut := Abbreviate(Request{Method: "tools/call", Params: json.RawMessage(`{"name":"summarize","arguments":{"text":` + long + `,"max":10}}`)})
	fmt.Println(cut)
	fmt.Println(string(short.Params))
	// Output:
	// true
	// {"arguments":{"max":10,"text":"lorem ipsum lorem ipsum lorem ipsum lorem ipsum …(1200 bytes, #133383213f9c)"},"name":"summarize"}
}

// FuzzAbbreviate: any JSON abbreviates to JSON, and the same value written
// otherwise (indented) abbreviates alike.
func FuzzAbbreviate(f *testing.F) {
	f.Add(`{"a":[1,2,3],"b":"x"}`)
	f.Add(`{"s":"` + strings.Repeat("é", 200) + `"}`)
	f.Add(`[` + strings.Repeat(`{"k":"`+strings.Repeat("v", 30)+`"},`, 20) + `0]`)
	f.Add(`{"n":1` + strings.Repeat("0", 200) + `}`)
	f.Fuzz(func(t *testing.T, params string) {
		if !json.Valid([]byte(params)) {
			return
		}
		short, _ := Abbreviate(Request{Params: json.RawMessage(params)})
		if !json.Valid(short.Params) {
			t.Fatalf("%s abbreviates to %s, not JSON", params, short.Params)
		}
		var indented bytes.Buffer
		if json.Indent(&indented, []byte(params), "", "  ") != nil {
			return
		}
		if again, _ := Abbreviate(Request{Params: indented.Bytes()}); !bytes.Equal(again.Params, short.Params) {
			t.Fatalf("indented, %s abbreviates to\n%s\nnot\n%s", params, again.Params, short.Params)
		}
	})
}
