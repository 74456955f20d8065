package main

import (
	"strings"
	"testing"
)

// TestFaultSelectorErrors: a --fault that does not parse says what the
// grammar wants at the place that is wrong (it said strconv.Atoi: parsing
// "x": invalid syntax), and a selector out of range is refused rather than
// scripted to never fire.
func TestFaultSelectorErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"get_weather#x=close", `#x: want #N (the Nth call), #N-M (calls N to M) or #N- (from the Nth on)`},
		{"get_weather#0=close", `#0: want #N`},
		{"get_weather#3-2=close", `#3-2: want #N`},
		{"get_weather%0=close", `%0: want %K (every Kth call)`},
		{"get_weather~1.5=close", `~1.5: want ~P (with probability P), with P from 0 to 1`},
		{"get_weather@5=close", `@5: want @N/DURATION`},
		{"get_weather@5/soon=close", `@5/soon: want @N/DURATION`},
		{"get_weather#3=explode", `unknown action "explode": want one of tool-error:MESSAGE, error:CODE[:MESSAGE]`},
		{"get_weather", `want SELECTOR=ACTION: SELECTOR is a tool name or a method`},
	} {
		_, err := parseFault(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFault(%q) = %v, want an error with %q", tc.spec, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "strconv") {
			t.Errorf("parseFault(%q): %v names Go's parser", tc.spec, err)
		}
	}
	for _, spec := range []string{"get_weather#3=close", "get_weather#2-4=no-answer", "get_weather#2-=delay:1s", "get_weather%2=close", "get_weather~0.3=close", "get_weather@5/1m=http:429", "tools/list=delay:2s"} {
		if _, err := parseFault(spec); err != nil {
			t.Errorf("parseFault(%q): %v", spec, err)
		}
	}
}

// TestRulesForUnknownToolsAreWarned: a --fault or --match-tool that names a
// tool the cassette does not have (a typo) is said at the start, with the
// tools it has; it was silent and never fired.
func TestRulesForUnknownToolsAreWarned(t *testing.T) {
	var stdout, stderr syncBuffer
	err := run(testContext(t), []string{"replay", "-c", "../../examples/weather/testdata/weather.json",
		"--fault", "get_wether#2=close", "--match-tool", "get_wether:ignore=arguments.units"}, strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`scripts tools/call of tool "get_wether", which the cassette neither lists nor calls (its tools: get_weather; did you mean "get_weather"?)`,
		`--match-tool or --match: the rules for tool "get_wether" never apply: the cassette neither lists nor calls it (its tools: get_weather; did you mean "get_weather"?)`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, &stderr)
		}
	}
}

// TestScriptedAnswersAreNotMatched: a call that a fault answered is logged
// as scripted and counted as such (a no-answer fault was logged as
// [replayed #2] and counted as matched).
func TestScriptedAnswersAreNotMatched(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"r","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`,
	}, "\n") + "\n"
	var stdout, stderr syncBuffer
	err := run(testContext(t), []string{"replay", "-c", "../../examples/weather/testdata/weather.json",
		"--fault", "get_weather#1=no-answer", "--fault", "get_weather#2=tool-error:boom"}, strings.NewReader(in), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	log := stderr.String()
	for _, want := range []string{
		`→ 2 tools/call get_weather {"location":"New York"} [scripted: overlay 1 interaction 1, on the answer of #2]`,
		`→ 3 tools/call get_weather {"location":"London"} [scripted: overlay 1 interaction 2]`,
		`replayed 3 messages, 1 matched, 0 unmatched, 2 unused, 2 scripted`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "[replayed #2]") {
		t.Errorf("a no-answer fault is logged as replayed:\n%s", log)
	}
}

// TestReplaySaysWhatNeverFired: replay's summary names the scripts that
// never fired, as run's does (a test meant to exercise them).
func TestReplaySaysWhatNeverFired(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"r","version":"1"}}}` + "\n"
	var stdout, stderr syncBuffer
	if err := run(testContext(t), []string{"replay", "-c", "../../examples/weather/testdata/weather.json", "--fault", "get_weather#5=close"}, strings.NewReader(in), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "mcpmock: never fired: --fault 'get_weather#5=close'"; !strings.Contains(stderr.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, &stderr)
	}
}
