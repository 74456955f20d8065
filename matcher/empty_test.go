package matcher

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEmptyObjectIsAbsent: a member whose value is {} (or becomes {} once
// its own empty members are gone) is the same as an absent one, at any depth,
// whichever side has it: in Match, in the index key that a lookup uses
// before Match runs, and in what a miss reports.
func TestEmptyObjectIsAbsent(t *testing.T) {
	cfg, err := ParseConfig(json.RawMessage(`{"ignore":["arguments.ts"],"unordered":["list"]}`))
	if err != nil {
		t.Fatal(err)
	}
	ruled, err := WithConfig(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	completion := `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}`
	tests := []struct {
		name           string
		method         string
		recorded, live string
	}{
		{"context live only", "completion/complete", completion,
			`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"},"context":{}}`},
		{"context recorded only", "completion/complete",
			`{"context":{},"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}`, completion},
		{"arguments live only", "tools/call", `{"name":"echo"}`, `{"name":"echo","arguments":{}}`},
		{"arguments recorded only", "tools/call", `{"name":"echo","arguments":{ }}`, `{"name":"echo"}`},
		{"nested live", "tools/call", `{"name":"e","arguments":{"a":1}}`, `{"name":"e","arguments":{"a":1,"opts":{}}}`},
		{"nested recorded", "tools/call", `{"name":"e","arguments":{"a":1,"opts":{"x":{}}}}`, `{"name":"e","arguments":{"a":1}}`},
		{"in an array", "x/y", `{"list":[{"a":1,"b":{}}]}`, `{"list":[{"a":1}]}`},
		{"array params", "x/y", `[{"a":{}}]`, `[{}]`},
		{"empty meta", "resources/read", `{"uri":"a","_meta":{}}`, `{"uri":"a","_meta":{"progressToken":3}}`},
		{"empty after meta", "resources/read", `{"uri":"a","context":{"_meta":{}}}`, `{"uri":"a"}`},
	}
	for name, m := range map[string]Matcher{"default": Default(), "rules": ruled} {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				rec, live := Request{tt.method, json.RawMessage(tt.recorded)}, Request{tt.method, json.RawMessage(tt.live)}
				if r := m.Match(rec, live); !r.Match {
					t.Errorf("Match = false, want true: %v\n%s", r.Differences, r.Diff)
				}
				rk, rok := AppendIndexKey(nil, m, rec)
				lk, lok := AppendIndexKey(nil, m, live)
				if !rok || !lok || string(rk) != string(lk) {
					t.Errorf("index keys differ: %q (%v) vs %q (%v)", rk, rok, lk, lok)
				}
			})
		}
	}
}

// TestEmptyObjectNotReported: when a request misses for another reason, a
// member that is {} on one side and absent on the other is not named as a
// difference, neither in Differences nor in the diff.
func TestEmptyObjectNotReported(t *testing.T) {
	tests := []struct {
		name           string
		recorded, live string
		want           string
	}{
		{"live has context", `{"argument":{"name":"a","value":"x"}}`, `{"argument":{"name":"a","value":"y"},"context":{}}`, `argument.value: recorded "x", live "y"`},
		{"recorded has context", `{"argument":{"name":"a","value":"x"},"context":{"arguments":{}}}`, `{"argument":{"name":"a","value":"y"}}`, `argument.value: recorded "x", live "y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Default().Match(req("completion/complete", tt.recorded), req("completion/complete", tt.live))
			if r.Match {
				t.Fatal("Match = true, want a miss")
			}
			var got []string
			for _, d := range r.Differences {
				got = append(got, d.String())
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("differences %q, want only %q", got, tt.want)
			}
			if strings.Contains(r.Diff, "context") {
				t.Errorf("the diff names context:\n%s", r.Diff)
			}
		})
	}
}
