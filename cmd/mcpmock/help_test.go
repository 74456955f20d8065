package main

import (
	"strings"
	"testing"
)

// TestHelp: every command's --help is on stdout (it went to stderr, so
// `| less` showed nothing) with its flags and examples; mcpmock --version
// and mcpmock cassette --help are not errors (they exited 2); a typo of a
// flag or a command says what was meant.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"record", "--help"}, {"replay", "--help"}, {"demo", "--help"}, {"view", "--help"},
		{"cassette", "lint", "--help"}, {"cassette", "show", "--help"}, {"cassette", "redact", "--help"}, {"cassette", "verify", "--help"},
	} {
		var stdout, stderr syncBuffer
		if err := run(testContext(t), args, strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		for _, want := range []string{"Usage:", "Flags:", "Examples:", "mcpmock " + strings.Join(args[:len(args)-1], " ")} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%v: stdout lacks %q:\n%s", args, want, &stdout)
			}
		}
		if stderr.String() != "" {
			t.Errorf("%v wrote to stderr:\n%s", args, &stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, "mcpmock "},
		{[]string{"cassette", "--help"}, "mcpmock cassette verify -c CASSETTE"},
		{[]string{"--help"}, "mcpmock cassette redact -c CASSETTE"},
		{[]string{"replay", "--help"}, "SELECTOR is a tool name or a method"},
		{[]string{"replay", "--help"}, `Match rules (--match, and "match" in a cassette) are a JSON object`},
	} {
		var stdout, stderr syncBuffer
		if err := run(testContext(t), tc.args, strings.NewReader(""), &stdout, &stderr); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("%v: stdout lacks %q:\n%s", tc.args, tc.want, &stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--casette", "x.json"}, "unknown flag: --casette; did you mean --cassette?"},
		{[]string{"record", "--upstrem", "http://127.0.0.1:1/mcp"}, "did you mean --upstream?"},
		{[]string{"replya"}, `unknown command "replya"; did you mean "replay"?`},
	} {
		var stdout, stderr syncBuffer
		err := run(testContext(t), tc.args, strings.NewReader(""), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
