package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// testCommand is the command line of the test binary as a test suite with
// the given steps (run_client_test.go), writing what it saw to out. The
// stdio clients it plays spawn MCPMOCK_ARGV: the test binary with mcpmock's
// connect mode, which TestMain runs as mcpmock.
func testCommand(steps, out string) []string {
	return []string{"env", runClientEnv + "=" + steps, runClientOut + "=" + out, os.Args[0]}
}

// recordedSession records the go-sdk client's script against the go-sdk
// server of the stateful era, and returns the cassette and what the
// client saw.
func recordedSession(t *testing.T) (string, testpeer.Transcript) {
	t.Helper()
	path := tempCassette(t)
	rec := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	live := session(t, rec, "go-sdk", "")
	if status := rec.wait(t); status != 0 {
		t.Fatalf("record exited with %d", status)
	}
	return path, live
}

// runReportOf reads a --report file.
func runReportOf(t *testing.T, path string) runReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep runReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, b)
	}
	return rep
}

// junitOf reads a --junit file as a CI system does: the elements and
// attributes of the JUnit XML format, nothing of mcpmock's own types.
func junitOf(t *testing.T, path string) junitRead {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junitRead
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("the JUnit file is not XML: %v\n%s", err, b)
	}
	if !strings.HasPrefix(string(b), "<?xml") {
		t.Errorf("the JUnit file has no XML declaration:\n%.200s", b)
	}
	return j
}

type junitRead struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// TestRunClients: go-sdk and mcp-go clients, over Streamable HTTP
// (MCPMOCK_URL) and over stdio (MCPMOCK_ARGV, spawned), run by mcpmock run
// as a test command, see what the live session showed; all their sessions
// count in one summary, report and JUnit file, and the run exits 0.
func TestRunClients(t *testing.T) {
	path, live := recordedSession(t)
	dir := t.TempDir()
	out, report, junit := filepath.Join(dir, "seen.json"), filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	steps := []string{"gosdk-http", "mcpgo-http", "gosdk-stdio", "mcpgo-stdio@weather"}
	p := start(t, append([]string{"run", "-c", "weather=" + path, "--report", report, "--junit", junit, "--"},
		testCommand(strings.Join(steps, ","), out)...)...)
	if s := p.wait(t); s != 0 {
		t.Fatalf("run exited with %d, want 0", s)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var seen map[string]string
	json.Unmarshal(b, &seen)
	for _, step := range steps {
		if diff := cmp.Diff(live.String(), seen[step]); diff != "" {
			t.Errorf("%s through mcpmock run differs from the live session (-live +run):\n%s", step, diff)
		}
	}
	rep := runReportOf(t, report)
	if rep.ExitStatus != 0 || rep.CommandStatus != 0 || len(rep.Failures) != 0 {
		t.Errorf("report: exit %d, command %d, failures %q; want 0, 0, none", rep.ExitStatus, rep.CommandStatus, rep.Failures)
	}
	if len(rep.Cassettes) != 1 || rep.Cassettes[0].Name != "weather" || rep.Cassettes[0].Variable != "MCPMOCK_URL_WEATHER" {
		t.Fatalf("report cassettes: %+v", rep.Cassettes)
	}
	c := rep.Cassettes[0]
	if c.Sessions < int64(len(steps)) || c.Matched == 0 || c.Missed != 0 || len(c.Misses) != 0 {
		t.Errorf("report counts %+v: want a session per client (%d), matches, no miss", c.counts, len(steps))
	}
	if rep.Totals != c.counts {
		t.Errorf("totals %+v, want the one cassette's %+v", rep.Totals, c.counts)
	}
	j := junitOf(t, junit)
	if j.Tests != 1 || j.Failures != 0 || len(j.Suites) != 1 || j.Suites[0].Cases[0].Name != "cassette weather" || j.Suites[0].Cases[0].Failure != nil {
		t.Errorf("junit: %+v, want one passed test case for the cassette", j)
	}
	if s := p.stderr.String(); !strings.Contains(s, "run: 1 cassettes, ") || !strings.Contains(s, " 0 missed, ") || !strings.Contains(s, ": ok") {
		t.Errorf("no summary of the run on stderr:\n%s", s)
	}
}

// TestRunExitStatus: the run exits with the command's status when it
// failed, else 1 when a request missed (over stdio or HTTP), unless
// --allow-misses; --fail-on-unused fails for unused requests. The report
// and the JUnit file say the same, with each miss explained.
func TestRunExitStatus(t *testing.T) {
	path := recordRaw(t) // initialize and get_weather New York
	tests := []struct {
		name   string
		steps  string
		flags  []string
		want   int
		misses int
	}{
		{"hit", "hit-stdio", nil, 0, 0},
		{"miss over stdio", "hit-stdio,miss-stdio", nil, 1, 1},
		{"miss allowed", "miss-stdio", []string{"--allow-misses"}, 0, 1},
		{"command fails", "hit-stdio,exit=3", nil, 3, 0},
		{"command fails and a miss", "miss-stdio,exit=4", nil, 4, 1},
		{"unused allowed", "env", nil, 0, 0},
		{"unused fails", "env", []string{"--fail-on-unused"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			report, junit := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
			args := append([]string{"run", "-c", path, "--report", report, "--junit", junit}, tt.flags...)
			p := start(t, append(append(args, "--"), testCommand(tt.steps, filepath.Join(dir, "seen.json"))...)...)
			if s := p.wait(t); s != tt.want {
				t.Fatalf("run exited with %d, want %d", s, tt.want)
			}
			rep := runReportOf(t, report)
			if rep.ExitStatus != tt.want || (tt.want == 0) != (len(rep.Failures) == 0) {
				t.Errorf("report: exit %d, failures %q; want exit %d", rep.ExitStatus, rep.Failures, tt.want)
			}
			c := rep.Cassettes[0]
			if c.Missed != int64(tt.misses) || len(c.Misses) != tt.misses {
				t.Fatalf("report: %d missed, %d explained, want %d", c.Missed, len(c.Misses), tt.misses)
			}
			if tt.steps == "env" {
				want := []interactionReport{{Interaction: 1, Method: "initialize"}, {Interaction: 3, Method: "tools/call", Tool: "get_weather"}}
				if diff := cmp.Diff(want, c.UnusedInteractions); diff != "" || c.Unused != 2 {
					t.Errorf("unused interactions (-want +got):\n%s", diff)
				}
			}
			j := junitOf(t, junit)
			cases := j.Suites[0].Cases
			if len(cases) != 1+tt.misses {
				t.Fatalf("junit: %d test cases, want one for the cassette and one per miss", len(cases))
			}
			if tt.misses > 0 {
				m := c.Misses[0]
				if m.Tool != "get_weather" || !strings.Contains(m.Message, `live "Boston"`) || len(m.Candidates) == 0 || !strings.Contains(m.Explanation, "-recorded +live") {
					t.Errorf("the miss is not explained: %+v", m)
				}
				mc := cases[1]
				allowed := slicesContains(tt.flags, "--allow-misses")
				switch {
				case mc.Name != "miss 1: tools/call get_weather":
					t.Errorf("junit miss case named %q", mc.Name)
				case !allowed && (mc.Failure == nil || !strings.Contains(mc.Failure.Text, "-recorded +live")):
					t.Errorf("junit miss case without the explained failure: %+v", mc)
				case allowed && (mc.Failure != nil || mc.Skipped == nil):
					t.Errorf("an allowed miss should be skipped, not failed: %+v", mc)
				}
			}
			wantFailed := tt.want == 1 && tt.name != "command fails"
			if got := cases[0].Failure != nil; got != wantFailed && tt.want <= 1 {
				t.Errorf("junit cassette case failed: %v, want %v", got, wantFailed)
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRunNames: each cassette gets MCPMOCK_URL_<NAME> (NAME upper-cased,
// other characters "_"; the file name when not given), MCPMOCK_COMMAND_
// and MCPMOCK_ARGV_ likewise, the first one's also unsuffixed; a stdio
// client of the second cassette reaches that cassette.
func TestRunNames(t *testing.T) {
	path := recordRaw(t)
	other := filepath.Join(t.TempDir(), "other.json")
	b, _ := os.ReadFile(path)
	os.WriteFile(other, b, 0o644)
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	p := start(t, append([]string{"run", "-c", "weather-eu=" + path, "-c", other, "--report", report, "--"},
		testCommand("env,hit-stdio@other", filepath.Join(dir, "seen.json"))...)...)
	env := p.recv(t)
	if s := p.wait(t); s != 0 {
		t.Fatalf("run exited with %d", s)
	}
	for _, k := range []string{"MCPMOCK_URL", "MCPMOCK_URL_WEATHER_EU", "MCPMOCK_URL_OTHER", "MCPMOCK_COMMAND", "MCPMOCK_COMMAND_WEATHER_EU", "MCPMOCK_COMMAND_OTHER", "MCPMOCK_ARGV", "MCPMOCK_ARGV_WEATHER_EU", "MCPMOCK_ARGV_OTHER"} {
		if env[k] == nil || env[k] == "" {
			t.Errorf("%s is not set; the command got %v", k, env)
		}
	}
	if env["MCPMOCK_URL"] != env["MCPMOCK_URL_WEATHER_EU"] || env["MCPMOCK_URL"] == env["MCPMOCK_URL_OTHER"] {
		t.Errorf("MCPMOCK_URL %v should be the first cassette's (%v), not the second's (%v)", env["MCPMOCK_URL"], env["MCPMOCK_URL_WEATHER_EU"], env["MCPMOCK_URL_OTHER"])
	}
	var argv []string
	json.Unmarshal([]byte(env["MCPMOCK_ARGV"].(string)), &argv)
	if words, err := splitWords(env["MCPMOCK_COMMAND"].(string)); err != nil || !cmp.Equal(words, argv) {
		t.Errorf("MCPMOCK_COMMAND %q splits into %q (%v), MCPMOCK_ARGV is %q", env["MCPMOCK_COMMAND"], words, err, argv)
	}
	rep := runReportOf(t, report)
	if rep.Cassettes[0].Matched != 0 || rep.Cassettes[1].Matched != 2 {
		t.Errorf("the stdio client of cassette other should have reached it: matched %d and %d", rep.Cassettes[0].Matched, rep.Cassettes[1].Matched)
	}
}

// TestRunForwardsSignals: SIGTERM and SIGINT sent to mcpmock run reach the
// command, whose status (128 + the signal) is the run's.
func TestRunForwardsSignals(t *testing.T) {
	path := recordRaw(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := start(t, append([]string{"run", "-c", path, "--"}, testCommand("await-signal", filepath.Join(t.TempDir(), "seen.json"))...)...)
			if m := p.recv(t); m["ready"] != true {
				t.Fatalf("the command wrote %v, want ready", m)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if s := p.wait(t); s != 128+int(sig) {
				t.Errorf("run exited with %d, want %d: the command's status after %v", s, 128+int(sig), sig)
			}
		})
	}
}

// TestRunFaults: a fault that fires and one that never does are both in
// the summary and the report.
func TestRunFaults(t *testing.T) {
	path := recordRaw(t)
	report := filepath.Join(t.TempDir(), "report.json")
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	o := cassettes.New()
	o.Interactions = append(o.Interactions, cassettes.Interaction{From: cassettes.FromClient, When: &cassettes.When{Nth: 2},
		Request: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather"}}`), Fault: &cassettes.Fault{Close: true}})
	if err := cassettes.Save(overlay, o); err != nil {
		t.Fatal(err)
	}
	p := start(t, append([]string{"run", "-c", path, "--report", report, "--overlay", overlay, "--fault", "get_weather#1=tool-error:API rate limit exceeded", "--fault", "get_wether=close", "--"},
		testCommand("hit-stdio", filepath.Join(t.TempDir(), "seen.json"))...)...)
	if s := p.wait(t); s != 0 {
		t.Fatalf("run exited with %d", s)
	}
	rep := runReportOf(t, report)
	want := []faultReport{
		{Source: "--fault 'get_weather#1=tool-error:API rate limit exceeded'", Method: "tools/call", Tool: "get_weather", Fired: 1},
		{Source: "--fault get_wether=close", Method: "tools/call", Tool: "get_wether", Fired: 0},
		{Source: "overlay " + overlay + " interaction 1", Method: "tools/call", Tool: "get_weather", Fired: 0},
	}
	if diff := cmp.Diff(want, rep.Cassettes[0].Faults); diff != "" {
		t.Errorf("faults in the report (-want +got):\n%s", diff)
	}
	if rep.Totals.FaultsFired != 1 || rep.Totals.FaultsNeverFired != 2 {
		t.Errorf("totals: %d fired, %d never fired; want 1 and 2", rep.Totals.FaultsFired, rep.Totals.FaultsNeverFired)
	}
	if s := p.stderr.String(); !strings.Contains(s, "--fault get_wether=close (tools/call get_wether) never fired") {
		t.Errorf("the summary does not say which fault never fired:\n%s", s)
	}
}

// TestRunUsage: mistakes in the command line are usage errors (exit 2)
// that say what to do.
func TestRunUsage(t *testing.T) {
	path := recordRaw(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"-c", path}, "run needs the test command after --"},
		{"no cassette", []string{"--", "true"}, "run needs at least one -c"},
		{"same variable", []string{"-c", "a-b=" + path, "-c", "a_b=" + path, "--", "true"}, "both name MCPMOCK_URL_A_B"},
		{"unknown name", []string{"-c", "w=" + path, "--upstream", "x=http://127.0.0.1:1/mcp", "--", "true"}, `no cassette is named "x"`},
		{"record without server", []string{"-c", path, "--mode", "record", "--", "true"}, "needs the live server of cassette"},
		{"listen", []string{"-c", path, "--listen", "127.0.0.1:0", "--", "true"}, "--listen is for replay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			err := run(t.Context(), append([]string{"run"}, tt.args...), strings.NewReader(""), &stderr, &stderr)
			if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}

// TestRunWords: MCPMOCK_COMMAND is argv quoted for a shell, and
// splitWords (--server) reads a shell's words back.
func TestRunWords(t *testing.T) {
	for _, argv := range [][]string{
		{"/usr/bin/mcpmock", "__connect", "127.0.0.1:4000", "abc"},
		{"/path with spaces/mcpmock", "it's", `"quoted"`, "$HOME", `back\slash`, ""},
	} {
		got, err := splitWords(joinWords(argv))
		if err != nil || !cmp.Equal(argv, got) {
			t.Errorf("splitWords(joinWords(%q)) = %q, %v", argv, got, err)
		}
	}
	for in, want := range map[string][]string{
		`env A=1 "b c" 'd e' f\ g`: {"env", "A=1", "b c", "d e", "f g"},
		`  x   y  `:                {"x", "y"},
		`"a\"b"`:                   {`a"b`},
	} {
		if got, err := splitWords(in); err != nil || !cmp.Equal(want, got) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`'open`, `"open`} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q): no error", bad)
		}
	}
	if got := envSuffix("weather-eu.v2"); got != "WEATHER_EU_V2" {
		t.Errorf("envSuffix = %q", got)
	}
}

// TestRunModes: the modes work through run, with the live server named by
// --server: record writes the cassette from the HTTP and the stdio
// clients' sessions, and a plain run then replays it to them; once
// records a missing cassette; new-episodes forwards a miss and appends
// it, so that the next plain run has no miss.
func TestRunModes(t *testing.T) {
	server := "w=" + joinWords(peerCommand(testpeer.GoSDKLegacy))
	dir := t.TempDir()
	runOnce := func(t *testing.T, path, steps string, flags ...string) (int, map[string]string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "seen.json")
		p := start(t, append(append([]string{"run", "-c", "w=" + path}, flags...), append([]string{"--"}, testCommand(steps, out)...)...)...)
		s := p.wait(t)
		b, _ := os.ReadFile(out)
		var seen map[string]string
		json.Unmarshal(b, &seen)
		if s != 0 {
			t.Logf("run exited with %d; stderr:\n%s", s, p.stderr)
		}
		return s, seen
	}
	// A stdio server is one session; an HTTP server takes them all.
	upstream := "--upstream=w=" + httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{}) + "/mcp"
	for _, tt := range []struct{ name, mode, live, steps string }{
		{"record stdio server", "record", "--server=" + server, "mcpgo-stdio"},
		{"once stdio server", "once", "--server=" + server, "gosdk-http"},
		{"record http server", "record", upstream, "gosdk-http,gosdk-stdio"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name, "w.json")
			s, recorded := runOnce(t, path, tt.steps, "--mode", tt.mode, tt.live)
			if s != 0 {
				t.Fatalf("--mode %s: exit %d", tt.mode, s)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("--mode %s wrote no cassette: %v", tt.mode, err)
			}
			s, replayed := runOnce(t, path, tt.steps)
			if s != 0 {
				t.Fatalf("replay of the recording: exit %d", s)
			}
			if diff := cmp.Diff(recorded, replayed); diff != "" || len(replayed) != len(strings.Split(tt.steps, ",")) {
				t.Errorf("the replay differs from the recording (-recorded +replayed):\n%s", diff)
			}
		})
	}
	t.Run("new-episodes", func(t *testing.T) {
		path := recordRaw(t)
		if s, _ := runOnce(t, path, "miss-stdio", "--mode", "new-episodes", "--server", server); s != 0 {
			t.Fatalf("--mode new-episodes: exit %d, want 0 (the miss goes to the live server)", s)
		}
		if s, seen := runOnce(t, path, "miss-stdio"); s != 0 || !strings.Contains(seen["miss-stdio"], "raw -> result") {
			t.Fatalf("the plain run after new-episodes: exit %d, saw %q; want the appended answer", s, seen["miss-stdio"])
		}
	})
}

// TestRunStdioExitFault: a scripted exit:STATUS fault ends the stdio
// server that a client spawned (MCPMOCK_COMMAND) with STATUS, as it ends
// replay's own process.
func TestRunStdioExitFault(t *testing.T) {
	path := recordRaw(t)
	out := filepath.Join(t.TempDir(), "seen.json")
	p := start(t, append([]string{"run", "-c", path, "--fault", "get_weather=exit:5", "--"}, testCommand("exit-stdio", out)...)...)
	if s := p.wait(t); s != 0 {
		t.Fatalf("run exited with %d", s)
	}
	b, _ := os.ReadFile(out)
	var seen map[string]string
	json.Unmarshal(b, &seen)
	if got := seen["exit-stdio"]; got != "server exit -> 5\n" {
		t.Errorf("the spawned server: %q, want exit status 5", got)
	}
}
