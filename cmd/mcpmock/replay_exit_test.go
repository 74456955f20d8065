package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

const (
	weatherHit  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`
	weatherMiss = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Boston"}}}`
)

// TestReplayExitStatusAfterMisses: replay exits 1 when a request matched
// nothing, over stdio and over --listen alike, names the count on stderr,
// and exits 0 with --allow-misses or when everything matched (DESIGN.md,
// "Command line"). Before, it exited 0 after misses.
func TestReplayExitStatusAfterMisses(t *testing.T) {
	tests := []struct {
		name   string
		listen bool
		calls  []string
		flags  []string
		want   int
	}{
		{"stdio hit", false, []string{initReq, weatherHit}, nil, 0},
		{"stdio miss", false, []string{initReq, weatherHit, weatherMiss}, nil, 1},
		{"stdio miss allowed", false, []string{initReq, weatherMiss}, []string{"--allow-misses"}, 0},
		{"listen hit", true, []string{weatherHit}, nil, 0},
		{"listen miss", true, []string{weatherMiss}, nil, 1},
		{"listen miss allowed", true, []string{weatherMiss}, []string{"--allow-misses"}, 0},
	}
	path := recordRaw(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"replay", "-c", path}, tt.flags...)
			var p *proc
			if tt.listen {
				var url string
				p, url = startListening(t, append(args, "--listen", "127.0.0.1:0")...)
				resp, body := postJSON(t, url, "", initReq)
				sid := resp.Header.Get("Mcp-Session-Id")
				if sid == "" {
					t.Fatalf("initialize: no session id (%d %s)", resp.StatusCode, body)
				}
				for _, call := range tt.calls {
					if _, body := postJSON(t, url, sid, call); !strings.Contains(body, `"id":`) {
						t.Fatalf("%s: answered %q", call, body)
					}
				}
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			} else {
				p = start(t, args...)
				for _, call := range tt.calls {
					p.send(t, call)
					p.recv(t)
				}
				p.stdin.Close()
			}
			if s := p.wait(t); s != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", s, tt.want, p.stderr)
			}
			failed := strings.Contains(p.stderr.String(), "matched nothing in the cassette: a miss fails the run")
			if failed != (tt.want == 1) {
				t.Errorf("stderr says the run failed for misses: %v, want %v; stderr:\n%s", failed, tt.want == 1, p.stderr)
			}
		})
	}
}

// TestReplayReport: replay --report writes the JSON report of run for its
// one cassette: the miss explained, the exit status it exits with.
func TestReplayReport(t *testing.T) {
	path := recordRaw(t)
	report := filepath.Join(t.TempDir(), "report.json")
	p := start(t, "replay", "-c", path, "--report", report, "--fault", "nope=close")
	for _, line := range []string{initReq, weatherHit, weatherMiss} {
		p.send(t, line)
		p.recv(t)
	}
	p.stdin.Close()
	if s := p.wait(t); s != 1 {
		t.Fatalf("exit status %d, want 1", s)
	}
	rep := runReportOf(t, report)
	if rep.ExitStatus != 1 || len(rep.Failures) != 1 || len(rep.Cassettes) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	c := rep.Cassettes[0]
	if c.Name != "session" || c.Mode != "replay" || c.Sessions != 1 || c.Matched != 2 || c.Missed != 1 || len(c.Misses) != 1 || c.FaultsNeverFired != 1 {
		t.Errorf("cassette report %+v", c)
	}
	if m := c.Misses[0]; m.Tool != "get_weather" || !strings.Contains(m.Message, `live "Boston"`) {
		t.Errorf("miss %+v", m)
	}
}

// TestRecordReport: record --report writes the report of the recording:
// the cassette in mode record with what was recorded, the server's status.
func TestRecordReport(t *testing.T) {
	path := tempCassette(t)
	report := filepath.Join(t.TempDir(), "report.json")
	p := start(t, append([]string{"record", "-c", path, "--report", report, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.send(t, weatherHit)
	p.recv(t)
	p.stdin.Close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("record exited with %d", s)
	}
	rep := runReportOf(t, report)
	if rep.ExitStatus != 0 || rep.CommandStatus != 0 || len(rep.Cassettes) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if c := rep.Cassettes[0]; c.Mode != "record" || c.Path != path || !strings.Contains(c.Recorded, "in 2 interactions to "+path) {
		t.Errorf("cassette report %+v", c)
	}
}
