package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests need no Node.js: they check the normalization and the table
// on lines written by hand in the format of client.mjs.

func TestNormalize(t *testing.T) {
	blob := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name, in, want string
	}{
		{"members sorted", `{"b":1,"a":{"d":2,"c":3}}`, `{"a":{"c":3,"d":2},"b":1}`},
		{"numbers kept as written", `{"n":3.140}`, `{"n":3.140}`},
		{"uuid", `"Elicitation ID: 264523d6-9f3c-4bd1-8fbc-49eeb0248f30"`, `"Elicitation ID: <id1>"`},
		{"task id", `{"taskId":"e23167b895ad8ad3163c9eb96ebd1a42"}`, `{"taskId":"<id1>"}`},
		{"ids numbered by first appearance, members in name order",
			`{"b":"e23167b895ad8ad3163c9eb96ebd1a42","a":"264523d6-9f3c-4bd1-8fbc-49eeb0248f30","c":"id e23167b895ad8ad3163c9eb96ebd1a42"}`,
			`{"a":"<id1>","b":"<id2>","c":"id <id2>"}`},
		{"a 33-digit hex is not an id", `"e23167b895ad8ad3163c9eb96ebd1a421"`, `"e23167b895ad8ad3163c9eb96ebd1a421"`},
		{"timestamp", `{"createdAt":"2026-12-01T21:08:11.581Z"}`, `{"createdAt":"<timestamp>"}`},
		{"time of day", `"created at 9:08:11 PM"`, `"created at <time>"`},
		{"session on stdio", `"Stopped for session undefined"`, `"Stopped for session <session>"`},
		{"session over HTTP", `"Stopped for session 63640fb6-b924-4ef0-bf55-8fd2526ec708"`, `"Stopped for session <session>"`},
		{"blob with a time", `{"blob":"` + blob("Resource 2: a blob created at 9:08:11 PM") + `"}`,
			`{"blob":"<base64 of: Resource 2: a blob created at <time>>"}`},
		{"blob without one", `{"blob":"` + blob("fixed") + `"}`, `{"blob":"` + blob("fixed") + `"}`},
		{"binary blob", `{"blob":"H4sIAAAAAAAAA0vLTEnNySypVEgbOgwAG/dw7LQAAAA="}`, `{"blob":"H4sIAAAAAAAAA0vLTEnNySypVEgbOgwAG/dw7LQAAAA="}`},
		{"simulated log", `{"notification":"notifications/message","params":{"level":"critical","data":"Critical-level message - SessionId 63640fb6-b924-4ef0-bf55-8fd2526ec708"}}`,
			`{"notification":"notifications/message","params":{"data":"<simulated log message>","level":"<random>"}}`},
		{"other log kept", `{"notification":"notifications/message","params":{"level":"info","data":"Roots updated: 2 root(s)"}}`,
			`{"notification":"notifications/message","params":{"data":"Roots updated: 2 root(s)","level":"info"}}`},
		{"html not escaped", `"<b>&"`, `"<b>&"`},
		{"absent", ``, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nz := normalizer{ids: map[string]string{}}
			got, err := nz.normalize([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("normalize(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

// A replay may give a server-made id a fresh value, but the same one
// wherever the id appears in the step.
func TestParseStepsNumbersIDsPerStep(t *testing.T) {
	const (
		recorded = "264523d6-9f3c-4bd1-8fbc-49eeb0248f30"
		fresh    = "0947d330-902e-41b1-ba9f-1fa8fee2830b"
	)
	line := func(inRequest, inAnswer string) string {
		return `{"step":"s","result":{"text":"Elicitation ID: ` + inAnswer + `"},"server":[{"request":"elicitation/create","params":{"elicitationId":"` + inRequest + `"}}]}` + "\n"
	}
	parse := func(in string) stepOutput {
		t.Helper()
		steps, err := parseSteps(strings.NewReader(in+in), "test")
		if err != nil || len(steps) != 2 {
			t.Fatalf("parseSteps: %v, %d steps", err, len(steps))
		}
		if steps[0].Result != steps[1].Result || steps[0].Server[0] != steps[1].Server[0] {
			t.Errorf("ids not numbered per step: %+v", steps)
		}
		return steps[0]
	}
	live, consistent, inconsistent := parse(line(recorded, recorded)), parse(line(fresh, fresh)), parse(line(fresh, recorded))
	if mark, _ := diffStep(&live, &consistent); mark != "=" {
		t.Errorf("a fresh id used consistently: %q, want =", mark)
	}
	if mark, _ := diffStep(&live, &inconsistent); mark != "result" {
		t.Errorf("a fresh id in the request, the recorded one in the answer: %q, want result", mark)
	}
}

func TestParseStepsSetsResentAside(t *testing.T) {
	in := `{"step":"a","result":{},"server":[{"notification":"n/x"},{"notification":"n/x","resent":true},{"request":"r/y","resent":true}]}` + "\n"
	steps, err := parseSteps(strings.NewReader(in), "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || len(steps[0].Server) != 1 || steps[0].Resent != 2 {
		t.Fatalf("got %+v, want one step with one message and two resent", steps)
	}
}

func TestParseStepsNamesTheBadLine(t *testing.T) {
	_, err := parseSteps(strings.NewReader("{\"step\":\"a\",\"result\":{}}\nnot json\n"), "leg.jsonl")
	if err == nil || !strings.Contains(err.Error(), "leg.jsonl:2") {
		t.Fatalf("got %v, want an error naming leg.jsonl:2", err)
	}
}

func TestDiffStep(t *testing.T) {
	const (
		logBefore = `{"before":true,"notification":"notifications/message","params":{"data":"x"}}`
		logAfter  = `{"notification":"notifications/message","params":{"data":"x"}}`
		updated   = `{"notification":"notifications/resources/updated"}`
	)
	tests := []struct {
		name       string
		want, got  stepOutput
		mark       string
		detailPart string
	}{
		{"same", stepOutput{Result: `{"a":1}`, Server: []string{logBefore}}, stepOutput{Result: `{"a":1}`, Server: []string{logBefore}}, "=", ""},
		{"result", stepOutput{Result: `{"a":{"b":[1,2]}}`}, stepOutput{Result: `{"a":{"b":[1,3]}}`}, "result", "$.a.b[1]: want 2, got 3"},
		{"member absent", stepOutput{Result: `{"a":1,"b":2}`}, stepOutput{Result: `{"a":1}`}, "result", "$.b: want 2, got (absent)"},
		{"message missing", stepOutput{Result: `{}`, Server: []string{logBefore, updated}}, stepOutput{Result: `{}`, Server: []string{updated}}, "msgs 1/2", "missing: " + logAfter},
		{"message extra", stepOutput{Result: `{}`}, stepOutput{Result: `{}`, Server: []string{updated}}, "msgs 1/0", "not in live: " + updated},
		{"order", stepOutput{Result: `{}`, Server: []string{logAfter, updated}}, stepOutput{Result: `{}`, Server: []string{updated, logAfter}}, "order",
			"want [| notifications/message notifications/resources/updated], got [| notifications/resources/updated notifications/message]"},
		{"order and when", stepOutput{Result: `{}`, Server: []string{logBefore, updated}}, stepOutput{Result: `{}`, Server: []string{updated, logAfter}}, "order",
			"want [notifications/message | notifications/resources/updated], got [| notifications/resources/updated notifications/message]"},
		{"after the answer", stepOutput{Result: `{}`, Server: []string{logBefore}}, stepOutput{Result: `{}`, Server: []string{logAfter}}, "when", "live before the answer, here after it"},
		{"both", stepOutput{Result: `1`, Server: []string{updated}}, stepOutput{Result: `2`}, "result+msgs 0/1", "$: want 1, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark, details := diffStep(&tt.want, &tt.got)
			if mark != tt.mark {
				t.Errorf("mark %q, want %q (details %q)", mark, tt.mark, details)
			}
			if tt.detailPart == "" && len(details) > 0 {
				t.Errorf("details %q, want none", details)
			}
			if tt.detailPart != "" && !strings.Contains(strings.Join(details, "\n"), tt.detailPart) {
				t.Errorf("details %q, want one containing %q", details, tt.detailPart)
			}
		})
	}
}

func TestReport(t *testing.T) {
	step := func(name, result string, server ...string) stepOutput {
		return stepOutput{Step: name, Result: result, Server: server}
	}
	live := []stepOutput{step("initialize", `{}`), step("ping", `{}`), step("tools/call x", `{"error":{"code":-32602}}`), step("echo", `{"t":"a"}`)}
	other := []stepOutput{step("initialize", `{}`), step("ping", `{}`), step("tools/call x", `{"error":{"code":-32602}}`), step("echo", `{"t":"b"}`)}
	tap := append([]stepOutput(nil), live...)
	tap[1].Resent = 3
	replay := []stepOutput{step("initialize", `{}`), step("ping", `{}`, `{"notification":"n"}`)}
	r := compare("stdio", map[string][]stepOutput{"live": live, "tap": tap, "replay": replay, "cross": other}, other)
	var b strings.Builder
	r.print(&b)
	want := `== stdio ==
step                   live     tap  replay    cross
initialize             ok       =    =         =
ping                   ok       =    msgs 1/0  =
tools/call x           error    =    missing   =
echo                   ok       =    missing   =
identical              4 steps  4/4  1/4       4/4
re-sent, not compared  0        3    0         0
stdio replay: ping: server message not in live: {"notification":"n"}
stdio replay: tools/call x: the client did not get this far (see the leg's .log)
stdio replay: echo: the client did not get this far (see the leg's .log)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("the report (-want +got):\n%s", diff)
	}
	if r.tapDiffers() {
		t.Error("tapDiffers: true for a tap equal to live")
	}
	if !r.replayDiffers() {
		t.Error("replayDiffers: false for a replay with missing steps")
	}
}

func TestTapDiffers(t *testing.T) {
	tests := []struct {
		transport, cell string
		want            bool
	}{
		{"stdio", "=", false},
		{"stdio", "when", true},
		{"sse", "when", true},
		{"http", "when", false}, // two HTTP streams may pass each other
		{"http", "order", true},
		{"http", "result", true},
		{"http", "missing", true},
	}
	for _, tt := range tests {
		r := &report{transport: tt.transport, cells: map[string]map[string]string{"tap": {"ping": tt.cell}}}
		if got := r.tapDiffers(); got != tt.want {
			t.Errorf("%s tap %q: tapDiffers %t, want %t", tt.transport, tt.cell, got, tt.want)
		}
	}
}

func TestTransports(t *testing.T) {
	for flag, want := range map[string]string{"all": "stdio http sse", "http": "http", "sse": "sse", "stdio": "stdio"} {
		got, err := transports(flag)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("transports(%q) = %v, %v; want %s", flag, got, err, want)
		}
	}
	if _, err := transports("websocket"); err == nil {
		t.Error(`transports("websocket"): no error`)
	}
}
