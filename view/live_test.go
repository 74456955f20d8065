package view

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// replayLog is a replay as the replayer logs it: each message with its
// note, and the explanation of a miss as a warning with the request's id.
func replayLog(t *testing.T, log *slog.Logger) {
	t.Helper()
	msg := func(dir, line, note string) {
		m, err := jsonrpc.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		livelog.Message(log, dir, m, 0, note)
	}
	msg(livelog.ToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`, "replayed #2")
	msg(livelog.ToClient, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Sunny"}]}}`, "")
	msg(livelog.ToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`, "replayed #2")
	msg(livelog.ToClient, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Sunny"}]}}`, "")
	msg(livelog.ToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Berlin"}}}`, "no match")
	log.Warn("no recorded tools/call of tool \"get_weather\" matches; closest is interaction 2\ninteraction 2 (-recorded +live):\n-\"New York\"\n+\"Berlin\"", "id", "3")
	msg(livelog.ToClient, `{"jsonrpc":"2.0","id":3,"error":{"code":-32010,"message":"mcpmock: no recorded tools/call of tool \"get_weather\" matches","data":{"method":"tools/call","recorded":true,"candidates":[{"interaction":2,"tool":"get_weather","differences":["arguments.location: recorded \"New York\", live \"Berlin\""],"diff":"-New York\n+Berlin"}]}}}`, "")
	msg(livelog.ToServer, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`, "scripted: --fault 1, on the answer of #3")
	msg(livelog.ToClient, `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"mcpmock: scripted error"}}`, "scripted: --fault 1")
	log.Warn("contract: the result of get_weather has no structuredContent", "note", "contract", "id", "4", "dir", "server→client")
	log.Info("an ordinary line that is no message")
}

// TestLiveReplay: what a replay made of each request (matched, repeated,
// missed with its explanation and candidates, scripted), mcpmock's own
// answers and notes in its lane, and the recorded requests no client
// used; against a golden file.
func TestLiveReplay(t *testing.T) {
	c, err := cassettes.Load(filepath.Join("testdata", "weather.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	live := NewLive("traffic", livelog.NewTextHandler(&lines))
	live.Replaying(c, nil)
	replayLog(t, slog.New(live))
	d := live.Document()
	var outcomes []string
	for _, m := range d.Messages {
		if m.Outcome != "" {
			outcomes = append(outcomes, m.Outcome)
		}
	}
	if got := strings.Join(outcomes, " "); got != "matched repeated missed scripted" {
		t.Errorf("outcomes %q", got)
	}
	miss := d.Messages[4]
	if !strings.Contains(miss.Explanation, `+"Berlin"`) || d.Messages[5].Kind != "note" || d.Messages[5].Pair != 4 || d.Messages[5].From != "mcpmock" {
		t.Errorf("the miss's explanation: %+v, note %+v", miss, d.Messages[5])
	}
	if d.Messages[6].By != "mcpmock" || d.Messages[8].By != "mcpmock" || d.Messages[1].By != "" {
		t.Errorf("mcpmock's own answers: %q %q %q", d.Messages[6].By, d.Messages[8].By, d.Messages[1].By)
	}
	contract := d.Messages[len(d.Messages)-1]
	if contract.Kind != "note" || contract.Pair != 8 || contract.Level != "WARN" {
		t.Errorf("the contract warning: %+v", contract)
	}
	if d.Replay == nil || len(d.Replay.Misses) != 1 || len(d.Replay.Misses[0].Candidates) != 1 || d.Replay.Recorded != "traffic (recorded)" {
		t.Fatalf("the replay: %+v", d.Replay)
	}
	// Interaction 2 answered; the others of weather.json's requests not.
	for _, u := range d.Replay.Unused {
		if u.Interaction == 2 {
			t.Errorf("interaction 2 is unused: %+v", d.Replay.Unused)
		}
	}
	if len(d.Replay.Unused) != len(requests(c))-1 {
		t.Errorf("%d unused, want %d", len(d.Replay.Unused), len(requests(c))-1)
	}
	if !strings.Contains(lines.String(), "an ordinary line") || !strings.Contains(lines.String(), "[no match]") {
		t.Errorf("the live log lost lines:\n%s", &lines)
	}
	for i := range d.Messages {
		d.Messages[i].AtMs = 0 // the clock of the test
	}
	golden(t, "live-replay.api.json", apiJSON(t, d))
}

// TestBoard: mcpmock run's board, a Live per cassette and the recorded
// cassettes after them; the event stream says how many messages each
// has.
func TestBoard(t *testing.T) {
	b := NewBoard()
	one, two := slog.New(b.Live("one", nil)), slog.New(b.Live("two", nil))
	c, err := cassettes.Load(filepath.Join("testdata", "weather.json"))
	if err != nil {
		t.Fatal(err)
	}
	b.Recorded(Build("weather.json", c))
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	replayLog(t, two)
	one.Warn("a warning of cassette one")
	resp, err := srv.Client().Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	r.ReadString('\n') // event: messages
	data, _ := r.ReadString('\n')
	var counts []int
	if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &counts); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	if len(counts) != 3 || counts[0] != 1 || counts[1] != 10 || counts[2] != len(Build("", c).Messages) {
		t.Errorf("counts %v", counts)
	}
	list, err := srv.Client().Get(srv.URL + "/api/cassettes")
	if err != nil {
		t.Fatal(err)
	}
	defer list.Body.Close()
	var entries []Entry
	json.NewDecoder(list.Body).Decode(&entries)
	if len(entries) != 3 || !entries[0].Live || !entries[1].Live || entries[2].Live || entries[2].Name != "weather.json" {
		t.Errorf("entries %+v", entries)
	}
}

// TestLiveContractWarning: a contract warning of the tap (livelog.Warning)
// carries the message it is about, not its id; the page attaches it to
// that message all the same.
func TestLiveContractWarning(t *testing.T) {
	live := NewLive("traffic", livelog.NewTextHandler(&bytes.Buffer{}))
	log := slog.New(live)
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	m, err := jsonrpc.Parse(req)
	if err != nil {
		t.Fatal(err)
	}
	livelog.Message(log, livelog.ToServer, m, 0, "")
	livelog.Warning(log, livelog.ToServer, req, "headers", "Mcp-Name says add, the body calls echo")
	d := live.Document()
	if len(d.Messages) != 2 {
		t.Fatalf("%d messages, want the request and the warning: %+v", len(d.Messages), d.Messages)
	}
	if w := d.Messages[1]; w.Kind != "note" || w.From != "mcpmock" || w.Pair != 0 || !strings.Contains(w.Note, "Mcp-Name says add") {
		t.Errorf("the warning: %+v, want a note of mcpmock's attached to message 0", w)
	}
}
