package view

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

var update = flag.Bool("update", false, "write the golden files of the JSON API")

// load builds the model of a cassette of testdata.
func load(t *testing.T, name string) *Document {
	t.Helper()
	c, err := cassettes.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Build(filepath.Base(name), c)
}

// goldens are the cassettes of TestGolden: the testdata ones (both eras,
// stdio and HTTP, every kind of message, a hostile one) and the examples.
var goldens = []string{"weather.json", "hostile.json", "kinds.json", "everything-stdio.json", "everything-http.json",
	"../../examples/weather/testdata/weather.json", "../../examples/record/testdata/weather.json", "../../examples/ratelimit/testdata/weather.json"}

// golden compares got with the golden file testdata/golden/name (go test
// ./view -update writes it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./view -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s changed (-golden +got); if that is right, go test ./view -update:\n%s", name, diff)
	}
}

// goldenName is the golden file of a cassette of goldens.
func goldenName(name string) string {
	name = strings.TrimSuffix(name, ".json")
	if strings.HasPrefix(name, "../") {
		name = strings.ReplaceAll(strings.TrimPrefix(name, "../../"), "/", "-")
	}
	return name
}

func apiJSON(t *testing.T, v any) []byte {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(got, '\n')
}

// TestGolden: the model of each cassette, as GET /api/cassettes/N returns
// it, against its golden file (go test ./view -update writes them); and
// the weather session annotated by the report of a replay with a miss.
func TestGolden(t *testing.T) {
	for _, name := range goldens {
		t.Run(goldenName(name), func(t *testing.T) {
			golden(t, goldenName(name)+".api.json", apiJSON(t, load(t, name)))
		})
	}
	t.Run("report", func(t *testing.T) {
		d := annotated(t)
		golden(t, "weather-report.api.json", apiJSON(t, d))
	})
}

// annotated is the weather session with the report of a replay that
// missed a call (testdata/weather.report.json, written by mcpmock replay
// --report).
func annotated(t *testing.T) *Document {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "weather.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := ReadReport("weather.report.json", f)
	if err != nil {
		t.Fatal(err)
	}
	d := load(t, "weather.json")
	if !rep.Annotate(d, filepath.Join("testdata", "weather.json")) {
		t.Fatal("the report does not name weather.json")
	}
	return d
}

// TestModelOfTheWeatherSession: who sent what, what answers what, and what
// the arrows say, on the recorded weather session.
func TestModelOfTheWeatherSession(t *testing.T) {
	d := load(t, "weather.json")
	if len(d.Sessions) != 1 {
		t.Errorf("%d sessions, want 1", len(d.Sessions))
	}
	var calls, toolErrors int
	for _, m := range d.Messages {
		if m.Kind == "request" && m.Method == "tools/call" {
			calls++
			if m.Tool != "get_weather" || !strings.Contains(m.Summary, "location") {
				t.Errorf("call #%d: tool %q, summary %q", m.Seq, m.Tool, m.Summary)
			}
			if m.Pair < 0 || d.Messages[m.Pair].Pair != m.Seq || d.Messages[m.Pair].Tool != "get_weather" {
				t.Errorf("call #%d is not paired with its answer: pair %d", m.Seq, m.Pair)
			}
		}
		if m.IsError {
			toolErrors++
			if !strings.Contains(m.Error, "API rate limit exceeded") {
				t.Errorf("tool error #%d says %q", m.Seq, m.Error)
			}
		}
	}
	if calls != 3 || toolErrors != 1 {
		t.Errorf("%d calls and %d tool errors, want 3 and 1", calls, toolErrors)
	}
}

// TestModelOfToolLists: the tools of each tools/list, and what changed
// from one list of a session to the next.
func TestModelOfToolLists(t *testing.T) {
	c, err := cassettes.Parse("lists.json", []byte(`{"version": 1, "interactions": [
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}}},
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}]}}}},
  {"from": "server", "atMs": 0, "notification": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "b", "description": "bee", "inputSchema": {"type": "object"}}, {"name": "c", "inputSchema": {"type": "object"}}]}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := Build("lists.json", c)
	if len(d.Tools) != 2 {
		t.Fatalf("%d tool lists, want 2", len(d.Tools))
	}
	second := d.Tools[1]
	if diff := cmp.Diff([]string{"c"}, second.Added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, second.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if second.Tools[0].Description != "bee" || string(second.Tools[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("tool b: %+v", second.Tools[0])
	}
	if s := d.Messages[second.Seq].Summary; s != "2 tools: b, c" {
		t.Errorf("the list's summary is %q", s)
	}
}

// TestModelOfEverything: on the recordings of the reference server
// (server-everything look-alikes over stdio and HTTP: progress, logs,
// sampling, elicitation, resources, list changes), every pairing goes both
// ways, every client request that the cassette answers is paired with its
// answer, and every server-to-client request with the client's reply.
func TestModelOfEverything(t *testing.T) {
	for _, name := range []string{"everything-stdio.json", "everything-http.json"} {
		t.Run(name, func(t *testing.T) {
			d := load(t, name)
			kinds := map[string]int{}
			for _, m := range d.Messages {
				kinds[m.Kind+" from "+m.From]++
				if m.Pair >= 0 && d.Messages[m.Pair].Pair != m.Seq {
					t.Errorf("#%d pairs with #%d, which pairs with #%d", m.Seq, m.Pair, d.Messages[m.Pair].Pair)
				}
				if (m.Kind == "response" || m.Kind == "error") && m.Pair < 0 {
					t.Errorf("#%d (%s, id %s) answers no request", m.Seq, m.Kind, m.ID)
				}
				if m.Kind == "request" && m.Pair >= 0 && d.Messages[m.Pair].From == m.From {
					t.Errorf("#%d is answered by its own side", m.Seq)
				}
			}
			for _, k := range []string{"request from client", "response from server", "notification from server", "request from server", "response from client"} {
				if kinds[k] == 0 {
					t.Errorf("no %s in %s: %v", k, name, kinds)
				}
			}
			if len(d.Tools) == 0 || len(d.Tools[0].Tools) == 0 {
				t.Errorf("no tools listed")
			}
		})
	}
}
