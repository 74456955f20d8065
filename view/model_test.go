package view

import (
	"bytes"
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
	return Build(name, c)
}

// TestGolden: the model of each testdata cassette, as GET /api/cassettes/N
// returns it, against its golden file (go test ./view -update writes them).
func TestGolden(t *testing.T) {
	for _, name := range []string{"weather.json", "hostile.json"} {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(load(t, name), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".json")+".api.json")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./view -update writes it)", err)
			}
			if diff := cmp.Diff(string(bytes.TrimSpace(want)), string(got)); diff != "" {
				t.Errorf("the model changed (-golden +got); if that is right, go test ./view -update:\n%s", diff)
			}
		})
	}
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
