package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestRecordSaveFlags records a real client's session with record's
// redaction flags (and without or with --keep-timing), checks that the
// cassette and the live log hold none of the redacted text, and replays it to the other
// client library, which sees the live session with the redactions.
func TestRecordSaveFlags(t *testing.T) {
	tests := []struct {
		recordWith, replayWith string
		keepTiming             bool
	}{
		{"go-sdk", "mcp-go", false},
		{"mcp-go", "go-sdk", true},
	}
	for _, tt := range tests {
		t.Run(tt.recordWith, func(t *testing.T) {
			t.Parallel()
			path := tempCassette(t)
			args := []string{"record", "-c", path,
				"--redact-value", "Partly cloudy",
				"--redact-regex", `Temperature: (\d+)`,
				"--redact-path", "params.arguments.text",
			}
			if tt.keepTiming {
				args = append(args, "--keep-timing")
			}
			rec := start(t, append(append(args, "--"), peerCommand(testpeer.GoSDK)...)...)
			live := session(t, rec, tt.recordWith, "2025-11-25")
			if s := rec.wait(t); s != 0 {
				t.Fatalf("record exited %d", s)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"Partly cloudy", "72°F"} {
				if strings.Contains(string(data), secret) {
					t.Errorf("the cassette still holds %q", secret)
				}
			}
			// The live log hides what the cassette does: the values, and
			// the echo call's argument at the path (its result, which
			// no rule names, stays).
			for _, secret := range []string{"Partly cloudy", "72°F"} {
				if strings.Contains(rec.stderr.String(), secret) {
					t.Errorf("the live log shows %q:\n%s", secret, rec.stderr)
				}
			}
			calls := 0
			for _, line := range strings.Split(rec.stderr.String(), "\n") {
				if strings.Contains(line, "tools/call echo") {
					calls++
					if strings.Contains(line, "héllo") || !strings.Contains(line, cassettes.Redacted) {
						t.Errorf("the live log shows the argument at --redact-path: %s", line)
					}
				}
			}
			if calls == 0 {
				t.Errorf("the live log shows no echo call:\n%s", rec.stderr)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var echoed bool
			for _, in := range c.Interactions {
				if strings.Contains(string(in.Request), `"echo"`) {
					echoed = true
					if strings.Contains(string(in.Request), "héllo") {
						t.Errorf("--redact-path left the echo call's argument: %s", in.Request)
					}
				}
			}
			if !echoed {
				t.Errorf("no echo call in the cassette:\n%s", data)
			}
			var timed bool
			for _, in := range c.Interactions {
				timed = timed || in.AtMs != 0 || (in.Response != nil && in.Response.AtMs != 0)
			}
			if timed != tt.keepTiming {
				t.Errorf("time offsets kept: %v, want %v (--keep-timing %v)", timed, tt.keepTiming, tt.keepTiming)
			}

			rep := start(t, "replay", "-c", path)
			replayed := session(t, rep, tt.replayWith, "2025-11-25")
			rep.stdin.Close()
			if s := rep.wait(t); s != 0 {
				t.Fatalf("replay exited %d", s)
			}
			want := make(testpeer.Transcript, len(live))
			for i, s := range live {
				s.Result = strings.ReplaceAll(s.Result, "Partly cloudy", cassettes.Redacted)
				s.Result = strings.ReplaceAll(s.Result, "Temperature: 72", "Temperature: "+cassettes.Redacted)
				want[i] = s
			}
			if diff := cmp.Diff(want, replayed); diff != "" {
				t.Errorf("replay of the redacted cassette (-live, redacted +replayed):\n%s", diff)
			}
		})
	}
}

// TestRecordSaveFlagsBadRule: a redaction rule that does not compile is a
// usage error (status 2) before any server starts.
func TestRecordSaveFlagsBadRule(t *testing.T) {
	path := tempCassette(t)
	p := start(t, append([]string{"record", "-c", path, "--redact-regex", "(unclosed", "--"}, peerCommand(testpeer.GoSDK)...)...)
	if s := p.wait(t); s != 2 {
		t.Fatalf("record with a bad rule exited %d, want 2:\n%s", s, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "(unclosed") {
		t.Errorf("the error does not name the rule:\n%s", p.stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a cassette was written: %v", err)
	}
}
