package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/view"
)

// uiURL waits for the line of --ui on stderr and returns its URL.
func uiURL(t *testing.T, p *proc) string {
	t.Helper()
	line := regexp.MustCompile(`mcpmock: ui: listening on (http://127\.0\.0\.1:\d+/)`)
	deadline := time.After(20 * time.Second)
	for {
		s, changed := p.stderr.next()
		if m := line.FindStringSubmatch(s); m != nil {
			return m[1]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no ui line:\n%s", s)
		}
	}
}

// liveDoc fetches the model of cassette n of the page at url (0: the
// live traffic of record and replay).
func liveDoc(t *testing.T, url string, n int) *view.Document {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%sapi/cassettes/%d", url, n))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d view.Document
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestUIShowsTheLiveTraffic: replay --ui and record --ui serve the web
// view of the traffic as it passes: every message whole, paired, with
// what mcpmock said of it (replayed #N, no match), and an event stream
// that says when more came.
func TestUIShowsTheLiveTraffic(t *testing.T) {
	weather := "../../examples/weather/testdata/weather.json"
	for _, tc := range []struct {
		name string
		args []string
		note string
	}{
		{"replay", []string{"replay", "-c", weather, "--ui", "127.0.0.1:0"}, "replayed #"},
		{"record", append([]string{"record", "-c", tempCassette(t), "--ui", "127.0.0.1:0", "--"}, peerCommand(testpeer.GoSDK)...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.args...)
			url := uiURL(t, p)
			events, err := http.Get(url + "api/events")
			if err != nil {
				t.Fatal(err)
			}
			defer events.Body.Close()
			first := bufio.NewReader(events.Body)
			if l, _ := first.ReadString('\n'); l != "event: messages\n" {
				t.Errorf("the event stream starts with %q", l)
			}
			p.send(t, initReq)
			p.recv(t)
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`)
			p.recv(t)
			var d *view.Document
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				d = liveDoc(t, url, 0)
				if len(d.Messages) >= 4 || time.Now().After(deadline) {
					break
				}
			}
			if len(d.Messages) < 4 {
				t.Fatalf("the live view has %d messages, want the 4 that passed", len(d.Messages))
			}
			call := d.Messages[2]
			if call.Method != "tools/call" || call.Tool != "get_weather" || call.Pair != 3 || !strings.Contains(string(call.JSON), `"New York"`) {
				t.Errorf("the call in the live view: %+v", call)
			}
			if tc.note != "" && !strings.HasPrefix(call.Note, tc.note) {
				t.Errorf("the call's note is %q, want %s...", call.Note, tc.note)
			}
			if tc.note != "" && (call.Outcome != "matched" || call.Answered == 0) {
				t.Errorf("the call's outcome: %q #%d, want matched", call.Outcome, call.Answered)
			}
			p.stdin.Close()
			p.wait(t)
		})
	}
	if err := run(testContext(t), []string{"replay", "-c", weather, "--ui", "0.0.0.0:0"}, strings.NewReader(""), &syncBuffer{}, &syncBuffer{}); exitCode(err, &syncBuffer{}) != 2 {
		t.Errorf("--ui 0.0.0.0:0: %v, want a usage error", err)
	}
}

// TestRunUI: run --ui serves one page for every cassette the run serves:
// the traffic of each, live, with what answered each request, and the
// recorded cassettes beside them.
func TestRunUI(t *testing.T) {
	path, _ := recordedSession(t)
	out := filepath.Join(t.TempDir(), "seen.json")
	p := start(t, append([]string{"run", "-c", "a=" + path, "-c", "b=" + path, "--allow-misses", "--ui", "127.0.0.1:0", "--"},
		testCommand("gosdk-http@a,miss-stdio@b,await-signal", out)...)...)
	url := uiURL(t, p)
	if m := p.recv(t); m["ready"] != true {
		t.Fatalf("the command wrote %v, want ready", m)
	}
	resp, err := http.Get(url + "api/cassettes")
	if err != nil {
		t.Fatal(err)
	}
	var entries []view.Entry
	json.NewDecoder(resp.Body).Decode(&entries)
	resp.Body.Close()
	var names []string
	for _, e := range entries {
		names = append(names, fmt.Sprintf("%s live=%v", e.Name, e.Live))
	}
	if got, want := strings.Join(names, ", "), "a live=true, b live=true, a (recorded) live=false, b (recorded) live=false"; got != want {
		t.Fatalf("the cassettes of the page: %s, want %s", got, want)
	}
	outcomes := func(d *view.Document) map[string]int {
		out := map[string]int{}
		for _, m := range d.Messages {
			if m.Outcome != "" {
				out[m.Outcome]++
			}
		}
		return out
	}
	a, b := liveDoc(t, url, 0), liveDoc(t, url, 1)
	if o := outcomes(a); o["matched"] == 0 || o["missed"] != 0 {
		t.Errorf("cassette a's outcomes: %v, want matches and no miss", o)
	}
	if o := outcomes(b); o["missed"] != 1 {
		t.Errorf("cassette b's outcomes: %v, want the miss", o)
	}
	if b.Replay == nil || len(b.Replay.Misses) != 1 || b.Replay.Misses[0].Explanation == "" || b.Replay.Recorded != "b (recorded)" || len(b.Replay.Unused) == 0 {
		t.Errorf("cassette b's replay: %+v", b.Replay)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t)
}
