package main

import (
	"strings"
	"testing"
)

// TestCassetteShow: cassette show prints what a message says without
// inventing timing for a recording that has none (it printed 0.0ms and a
// latency of 1µs on every line), summarises list results and progress,
// and prints messages whole with --full.
func TestCassetteShow(t *testing.T) {
	show := func(args ...string) string {
		t.Helper()
		var stdout, stderr syncBuffer
		if err := run(testContext(t), append([]string{"cassette", "show"}, args...), strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, &stderr)
		}
		return stdout.String()
	}
	untimed := show("../../view/testdata/everything-stdio.json")
	for _, want := range []string{
		"(recorded without timing: messages in the order they passed)",
		"← 1 result 17 tools: echo, get-annotated-message,",
		"← notifications/progress progress 1/3",
		"→ 5 tools/call get-sum {\"a\":19,\"b\":23}",
		"← 5 result The sum of 19 and 23 is 42.",
	} {
		if !strings.Contains(untimed, want) {
			t.Errorf("show lacks %q:\n%s", want, untimed)
		}
	}
	for _, invented := range []string{"0.0ms", "µs)"} {
		if strings.Contains(untimed, invented) {
			t.Errorf("show of an untimed recording prints %q", invented)
		}
	}
	timed := show("../../examples/weather/testdata/weather.json")
	if !strings.Contains(timed, "ms  #2 → 2 tools/call get_weather {\"location\":\"New York\"}") || !strings.Contains(timed, "ms)") {
		t.Errorf("show of a timed recording lacks the offsets or the latency:\n%s", timed)
	}
	if !strings.Contains(timed, "✗ tool error: Failed to fetch weather data: API rate limit exceeded") {
		t.Errorf("the tool error is not marked:\n%s", timed)
	}
	full := show("--full", "../../examples/weather/testdata/weather.json")
	if !strings.Contains(full, `       {"jsonrpc":"2.0","id":4,"result":{`) {
		t.Errorf("--full does not print the messages whole:\n%s", full)
	}
}

// TestLintMissingFile: a cassette that does not exist has no line and
// column to report (lint said line 1, column 1).
func TestLintMissingFile(t *testing.T) {
	var stdout, stderr syncBuffer
	err := run(testContext(t), []string{"cassette", "lint", "nope.json"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatal("lint of a missing file succeeded")
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	if first != `error: nope.json: no such file or directory` {
		t.Errorf("lint says %q", first)
	}
}
