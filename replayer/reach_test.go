package replayer

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestScriptsThatCannotFireAreWarned: a script or a rule that names a tool
// the cassette neither lists nor calls (a typo) is logged once at the
// start with the tools the cassette has, and so is a fault on the recorded
// answer of a method the cassette never holds; scripts that can fire are
// not.
func TestScriptsThatCannotFireAreWarned(t *testing.T) {
	c, err := cassettes.Parse("c.json", []byte(`{"version": 1,
  "match": {"tools": {"get_weather": {"ignore": ["arguments.units"]}, "get_forcast": {"ignore": ["arguments.days"]}}},
  "interactions": [
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}, {"name": "get_forecast", "inputSchema": {"type": "object"}}]}}}},
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_weather", "arguments": {}}},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 2, "result": {"content": []}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := cassettes.Parse("o.json", []byte(`{"version": 1, "interactions": [
  {"request": {"method": "tools/call", "params": {"name": "get_wether"}}, "fault": {"close": true}},
  {"request": {"method": "tools/call", "params": {"name": "get_weather"}}, "fault": {"close": true}},
  {"request": {"method": "tools/call", "params": {"name": "get_forecast"}}, "fault": {"noAnswer": true}},
  {"request": {"method": "tools/lsit"}, "fault": {"delayMs": 100}},
  {"request": {"method": "prompts/list"}, "response": {"message": {"result": {"prompts": []}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if _, err := New(c, &Options{Overlays: []*cassettes.Cassette{overlay}, Logger: slog.New(slog.NewTextHandler(&log, nil))}); err != nil {
		t.Fatal(err)
	}
	got := log.String()
	for _, want := range []string{
		`overlay 1 interaction 1 scripts tools/call of tool \"get_wether\", which the cassette neither lists nor calls (its tools: get_forecast, get_weather; did you mean \"get_weather\"?)`,
		`overlay 1 interaction 4 changes the recorded answer to tools/lsit, and the cassette holds no tools/lsit request: it never fires`,
		`the cassette's \"match\" has rules for tool \"get_forcast\", which it neither lists nor calls (its tools: get_forecast, get_weather; did you mean \"get_forecast\"?): they never apply`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks\n%s\nlog:\n%s", want, got)
		}
	}
	for _, not := range []string{"interaction 2 ", "interaction 3 ", "interaction 5 ", `tool \"get_weather\", which`} {
		if strings.Contains(got, not) {
			t.Errorf("a script that can fire is warned about (%s):\n%s", not, got)
		}
	}
}
