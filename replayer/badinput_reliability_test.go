package replayer

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// The bad-input catalogue of DESIGN.md against the replay server, on stdio
// and on Streamable HTTP. Each bad input gets the answer a real server
// gives, and the session goes on: after each, a recorded call still
// replays.

var catalogueCassette = cassette(initialize, call(1, "echo", `{"text":"hi"}`, text("hi")))

const goodCall = `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

// bigLine is a call whose line is past n bytes.
func bigLine(n int) string {
	return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("a", n) + `"}}}`
}

// stdioCase is one bad line and the answers it must get: each want is
// "error CODE id ID", "result id ID", or "batch N".
type stdioCase struct {
	name string
	line string
	want []string
}

func stdioCatalogue() []stdioCase {
	cases := []stdioCase{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, []string{"error -32700 id null"}},
		{"invalid request: no method", `{"jsonrpc":"2.0","id":2}`, []string{"error -32600 id 2"}},
		{"invalid request: a method that is no string", `{"jsonrpc":"2.0","id":7,"method":5}`, []string{"error -32600 id 7"}},
		{"invalid request: not an object", `42`, []string{"error -32600 id null"}},
		{"binary garbage", "\x00\x01\x02\xfe\xff garbage \x1b[31m", []string{"error -32700 id null"}},
		// Accepted as encoding/json accepts it (U+FFFD), then a miss: the
		// text differs from the recorded one.
		{"invalid UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\xfe\"}}}", []string{"error -32010 id 3"}},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, []string{"error -32600 id 4"}},
		{"no jsonrpc member", `{"id":5,"method":"ping"}`, []string{"error -32600 id 5"}},
		{"id of the wrong type: object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, []string{"error -32600 id null"}},
		{"id of the wrong type: bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, []string{"error -32600 id null"}},
		{"a response to nothing", `{"jsonrpc":"2.0","id":77,"result":{}}`, nil},
		{"an error response to nothing", `{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"x"}}`, nil},
		{"a batch of requests", `[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}},{"jsonrpc":"2.0","id":11,"method":"nope"}]`, []string{"batch 2"}},
		{"an empty batch", `[]`, []string{"error -32600 id null"}},
		{"a batch of garbage", `[1,2]`, []string{"batch 2"}},
		{"an empty line", ``, nil},
		{"a line of spaces", "   \t ", nil},
		// A long line within the limit is read and answered (a miss: the
		// text differs).
		{"a line of 4 MiB", bigLine(4 << 20), []string{"error -32010 id 9"}},
	}
	if *soak {
		// Some seconds under -race on a busy machine: with -soak only.
		cases = append(cases, stdioCase{"a line past 64 MiB", bigLine(64 << 20), []string{"error -32700 id null"}})
	}
	return cases
}

// describe turns one answer into the words of stdioCase.want.
func describe(t *testing.T, raw string) string {
	t.Helper()
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "[") {
		var elems []json.RawMessage
		if err := json.Unmarshal([]byte(raw), &elems); err != nil {
			t.Fatalf("a batch answer that is not JSON: %q", raw)
		}
		return "batch " + itoa(len(elems))
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.JSONRPC != "2.0" {
		t.Fatalf("an answer that is not JSON-RPC 2.0: %q", raw)
	}
	id := string(m.ID)
	if id == "" {
		id = "null"
	}
	if m.Error != nil {
		return "error " + itoa(m.Error.Code) + " id " + id
	}
	return "result id " + id
}

func TestBadInputStdioReplay(t *testing.T) {
	for _, tc := range stdioCatalogue() {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := serveCassette(t, catalogueCassette, nil)
			w.send(tc.line)
			for _, want := range tc.want {
				if got := describe(t, recvLine(t, w)); got != want {
					t.Errorf("answer %q, want %q", got, want)
				}
			}
			w.send(goodCall)
			if got := describe(t, recvLine(t, w)); got != `result id "after"` {
				t.Errorf("the next call got %q, want its recorded result: the session must go on", got)
			}
			if err := w.close(); err != nil {
				t.Errorf("Serve = %v, want nil at the end of input", err)
			}
		})
	}
}

func TestBadInputStdioReplayLastLineWithoutNewline(t *testing.T) {
	w, _ := serveCassette(t, catalogueCassette, nil)
	io.WriteString(w.w, goodCall)
	w.w.Close()
	if got := describe(t, recvLine(t, w)); got != `result id "after"` {
		t.Errorf("a last line without newline got %q, want its answer", got)
	}
	if err := <-w.done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestBadInputStdioReplayDuplicateInFlightID(t *testing.T) {
	// Two calls share id 7 while the first is in flight (a recorded
	// latency keeps it there): each is answered, under that id, as a
	// server that does not track ids would; neither is lost.
	w, _ := serveCassette(t, catalogueCassette, &Options{Latency: Latency{Fixed: 50 * time.Millisecond}})
	line := strings.Replace(goodCall, `"after"`, `7`, 1)
	w.send(line)
	w.send(line)
	for range 2 {
		if got := describe(t, recvLine(t, w)); got != "result id 7" {
			t.Errorf("got %q, want result id 7", got)
		}
	}
}

func recvLine(t *testing.T, w *wire) string {
	t.Helper()
	select {
	case l, ok := <-w.lines:
		if !ok {
			t.Fatal("the replay closed its output")
		}
		return l
	case <-time.After(60 * time.Second):
		// A guard against a hang, not a timing: explaining the miss of a
		// 4 MiB line takes seconds under -race on a loaded machine.
		t.Fatal("no answer within 60s")
	}
	return ""
}
