package matcher

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// numberAsText finds cmp's rendering of a json.Number (s"2").
var numberAsText = regexp.MustCompile(`(^|\W)s"`)

// TestMissDiffShowsNumbers: the diff of a miss shows a number as the number
// it is (int64(2)), not as the text cmp gives a json.Number (s"2"), through
// the default matcher and through configured rules.
func TestMissDiffShowsNumbers(t *testing.T) {
	ignoring, err := WithConfig(nil, &Config{Ignore: []string{"arguments.ts"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := req("tools/call", `{"name":"add","arguments":{"a":1.0,"b":2,"c":0.5,"big":12345678901234567890,"ts":1}}`)
	live := req("tools/call", `{"name":"add","arguments":{"a":1,"b":3,"c":0.25,"big":12345678901234567891,"ts":2}}`)
	for name, m := range map[string]Matcher{"default": Default(), "rules": ignoring} {
		t.Run(name, func(t *testing.T) {
			res := m.Match(rec, live)
			if res.Match {
				t.Fatal("matched")
			}
			if numberAsText.MatchString(res.Diff) {
				t.Errorf("the diff shows numbers as text:\n%s", res.Diff)
			}
			for _, want := range []string{"int64(2)", "int64(3)", "float64(0.5)", "float64(0.25)", "uint64(12345678901234567890)", "uint64(12345678901234567891)", `"a":`} {
				if !strings.Contains(res.Diff, want) {
					t.Errorf("the diff lacks %s:\n%s", want, res.Diff)
				}
			}
		})
	}
}

func TestPlain(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"2", int64(2)},
		{"-2.0", int64(-2)},
		{"1e2", int64(100)},
		{"0.1", 0.1},
		{"18446744073709551615", uint64(18446744073709551615)},
		{"1e300", 1e300},
		{"123456789012345678901234567890", json.Number("123456789012345678901234567890")},
		{"0.30000000000000000001", json.Number("0.30000000000000000001")},
	}
	for _, tt := range tests {
		tree, ok := Decode(json.RawMessage(`[` + tt.in + `]`))
		if !ok {
			t.Fatalf("Decode(%s) failed", tt.in)
		}
		if got := Plain(tree).([]any)[0]; got != tt.want {
			t.Errorf("Plain(%s) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}
