package replayer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestMissAdvice: a miss advises ignoring the paths in which the closest
// recorded call differs, unless ignoring them would also accept another
// recorded call of the tool that differs there (they tell the calls apart);
// the command line's hint stays as it was.
func TestMissAdvice(t *testing.T) {
	type call_ struct{ tool, args string }
	tests := []struct {
		name     string
		recorded []call_
		live     call_
		want     Advice
		cliHint  string // a part of Hint
	}{
		{"one call", []call_{{"add", `{"a":1,"b":2}`}}, call_{"add", `{"a":1,"b":4}`},
			Advice{Ignore: []string{"arguments.b"}}, "--match-ignore arguments.b"},
		{"the argument tells the calls apart", []call_{{"add", `{"a":1,"b":2}`}, {"add", `{"a":1,"b":3}`}}, call_{"add", `{"a":1,"b":4}`},
			Advice{Apart: []string{"arguments.b"}}, "--match-ignore arguments.b"},
		{"another argument tells the calls apart", []call_{{"search", `{"q":"cats","ts":1}`}, {"search", `{"q":"dogs","ts":2}`}}, call_{"search", `{"q":"cats","ts":3}`},
			Advice{Ignore: []string{"arguments.ts"}}, "--match-ignore arguments.ts"},
		{"the same call twice", []call_{{"add", `{"a":1,"b":2}`}, {"add", `{"a":1,"b":2}`}}, call_{"add", `{"a":1,"b":4}`},
			Advice{Ignore: []string{"arguments.b"}}, "--match-ignore arguments.b"},
		{"another tool tells them apart", []call_{{"add", `{"a":1,"b":2}`}, {"sub", `{"a":1,"b":3}`}}, call_{"add", `{"a":1,"b":4}`},
			Advice{Ignore: []string{"arguments.b"}}, "--match-ignore arguments.b"},
		{"a tool never recorded", []call_{{"sub", `{"a":1}`}}, call_{"add", `{"a":1}`}, Advice{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			for i, c := range tt.recorded {
				calls = append(calls, call(i+1, c.tool, c.args, text("ok")))
			}
			c, err := cassettes.Parse("t.json", []byte(cassette(calls...)))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := jsonrpc.Parse([]byte(matchCall(1, tt.live.tool, tt.live.args)))
			plan := e.newSession().handleContext(t.Context(), msg)
			if plan.Miss == nil {
				t.Fatal("no miss")
			}
			if diff := cmp.Diff(tt.want, plan.Miss.Advice()); diff != "" {
				t.Errorf("Advice() (-want +got):\n%s", diff)
			}
			if tt.cliHint == "" && plan.Miss.Hint != "" || !strings.Contains(plan.Miss.Hint, tt.cliHint) {
				t.Errorf("Hint = %q, want it to contain %q", plan.Miss.Hint, tt.cliHint)
			}
		})
	}
}
