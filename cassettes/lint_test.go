package cassettes

import (
	"strings"
	"testing"
	"time"
)

func TestLint(t *testing.T) {
	data := `{
  "version": 1,
  "meta": {"recordedAt": "2020-01-01T00:00:00Z"},
  "interactions": [
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"}, "times": -1,
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 2, "method": "ping"},
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 2, "result": {}}}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "a"}}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "b", "arguments": {"apiKey": "xyz"}}},
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 4, "result": {}}}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "b", "arguments": {"apiKey": "xyz"}}},
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 5, "result": {}}}}
  ]
}
`
	now := time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
	problems, c := Lint("x.json", []byte(data), &LintOptions{MaxAge: 24 * time.Hour, MaxAgeFail: true, Now: func() time.Time { return now }})
	if c == nil {
		t.Fatal("no cassette")
	}
	wantProblems(t, problems, []string{
		"error: line 1, column 1: the recording is 1416h to 1440h old",
		"error: line 7, column 5: interaction 2: unreachable: interaction 1",
		"warning: line 9, column 5: interaction 3: request tools/call a has no response",
		"warning: line 12, column 5: interaction 5: duplicate of interaction 4",
		"error: line 10, column 5: interaction 4: a secret at request params.arguments.apiKey (member name apiKey)",
		"error: line 12, column 5: interaction 5: a secret at request params.arguments.apiKey",
	})
	problems, _ = Lint("bad.json", []byte(`{"version": 2, "interactions": []}`), nil)
	if len(problems) != 1 || problems[0].Severity != SeverityError || !strings.Contains(problems[0].Message, "version 2") {
		t.Errorf("version problem: %v", problems)
	}
}

// wantProblems checks the problems against want, each a prefix of one,
// in order.
func wantProblems(t *testing.T, problems []Problem, want []string) {
	t.Helper()
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
}

// TestAgeOfADay: a stable file keeps only the day of its recording, so a
// cassette recorded minutes ago is not older than an hour (it was said to
// be 17 hours old), and one recorded with a time of day has an exact age.
func TestAgeOfADay(t *testing.T) {
	now := time.Date(2026, 12, 1, 17, 8, 0, 0, time.UTC)
	for _, tc := range []struct {
		recordedAt string
		max        time.Duration
		exceeds    bool
		says       string
	}{
		{"2026-12-01T00:00:00Z", time.Hour, false, "0h to 17h"},
		{"2026-11-30T00:00:00Z", time.Hour, true, "17h to 41h"},
		{"2026-11-29T00:00:00Z", 24 * time.Hour, true, "41h to 65h"},
		{"2026-11-29T00:00:00Z", 48 * time.Hour, false, "41h to 65h"},
		{"2026-12-01T17:00:00Z", time.Hour, false, "0h"},
		{"2026-12-01T15:00:00Z", time.Hour, true, "2h"},
	} {
		c := &Cassette{Meta: Meta{RecordedAt: tc.recordedAt}}
		age, ok := c.AgeAt(now)
		if !ok {
			t.Fatalf("%s: no age", tc.recordedAt)
		}
		if got := age.Exceeds(tc.max); got != tc.exceeds {
			t.Errorf("%s: Exceeds(%s) = %v, want %v (age %+v)", tc.recordedAt, tc.max, got, tc.exceeds, age)
		}
		if got := age.String(); got != tc.says {
			t.Errorf("%s: String() = %q, want %q", tc.recordedAt, got, tc.says)
		}
	}
	if _, ok := (&Cassette{}).AgeAt(now); ok {
		t.Error("a cassette without recordedAt has an age")
	}
}
