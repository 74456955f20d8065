package replayer

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// wire is a raw JSON-lines client of a replay served in-process.
type wire struct {
	t     *testing.T
	w     io.WriteCloser
	r     *bufio.Reader
	done  chan error
	lines chan string
}

// engineOf is the engine of the cassette text.
func engineOf(t *testing.T, text string, opts *Options) *Engine {
	t.Helper()
	c, err := cassettes.Parse("test.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func serveCassette(t *testing.T, text string, opts *Options) (*wire, *Engine) {
	t.Helper()
	e := engineOf(t, text, opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &wire{t: t, w: inW, r: bufio.NewReader(outR), done: make(chan error, 1), lines: make(chan string, 100)}
	go func() {
		w.done <- e.Serve(t.Context(), inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(w.lines)
		for {
			l, err := w.r.ReadString('\n')
			if err != nil {
				return
			}
			w.lines <- l
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return w, e
}

func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.w, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wire) recv() map[string]any {
	w.t.Helper()
	select {
	case l, ok := <-w.lines:
		if !ok {
			w.t.Fatal("the replay closed its output")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			w.t.Fatalf("not JSON: %q", l)
		}
		return m
	case <-time.After(5 * time.Second):
		w.t.Fatal("no message from the replay within 5s")
	}
	return nil
}

func (w *wire) close() error {
	w.w.Close()
	return <-w.done
}

func cassette(interactions ...string) string {
	return `{"version":1,"meta":{},"interactions":[` + strings.Join(interactions, ",") + `]}`
}

func call(id int, tool, args, result string) string {
	return `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}},` +
		`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":` + itoa(id) + `,"result":` + result + `}}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func text(s string) string { return `{"content":[{"type":"text","text":"` + s + `"}]}` }

func TestRepeatsInRecordedOrderThenLast(t *testing.T) {
	w, e := serveCassette(t, cassette(
		call(1, "roll", `{}`, text("one")),
		call(2, "roll", `{}`, text("two")),
		call(3, "other", `{}`, text("other")),
	), nil)
	var got []string
	for i := range 4 {
		w.send(`{"jsonrpc":"2.0","id":"r` + itoa(i) + `","method":"tools/call","params":{"name":"roll","arguments":{}}}`)
		m := w.recv()
		if m["id"] != "r"+itoa(i) {
			t.Errorf("response id %v, want the live id r%d", m["id"], i)
		}
		got = append(got, m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string))
	}
	if diff := cmp.Diff([]string{"one", "two", "two", "two"}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	w.close()
	if s := e.Stats(); s.Matched != 4 || s.Unused != 1 || s.Unmatched != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestExchangeReplayed: progress goes out with the live token, a
// server-to-client request with a fresh id, and the response waits for the
// client's reply to it.
func TestExchangeReplayed(t *testing.T) {
	in := `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"progressToken":"rec"}}},
	"exchange":[
	 {"from":"server","atMs":1,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"rec","progress":1,"total":2}}},
	 {"from":"server","atMs":2,"message":{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}},
	 {"from":"client","atMs":3,"message":{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}}
	],
	"response":{"from":"server","atMs":4,"message":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}}`
	after := `{"from":"server","atMs":5,"notification":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}`
	w, _ := serveCassette(t, cassette(in, after), nil)
	w.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"progressToken":77}}}`)
	prog := w.recv()
	if prog["method"] != "notifications/progress" || prog["params"].(map[string]any)["progressToken"] != float64(77) {
		t.Fatalf("progress: %v", prog)
	}
	req := w.recv()
	if req["method"] != "sampling/createMessage" || req["id"] == float64(0) {
		t.Fatalf("server request: %v (want a fresh id)", req)
	}
	select {
	case l := <-w.lines:
		t.Fatalf("the response did not wait for the client's reply: %s", l)
	case <-time.After(50 * time.Millisecond):
	}
	id, _ := json.Marshal(req["id"])
	w.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
	if m := w.recv(); m["id"] != float64(9) || m["result"] == nil {
		t.Errorf("response: %v", m)
	}
	if m := w.recv(); m["method"] != "notifications/tools/list_changed" {
		t.Errorf("after the response: %v, want the recorded list_changed", m)
	}
	// Without a progress token the client gets no progress.
	w.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	if m := w.recv(); m["method"] != "sampling/createMessage" {
		t.Errorf("without a token: %v, want no progress and the server request", m)
	}
	w.close()
}

// TestBatchAnswersKeepTheirResponses: the responses of a batch wait in the
// batch answer while the other requests of the batch are answered, though
// the memory of a finished plan is handed on to the next (releaseAll): the
// answer holds copies.
func TestBatchAnswersKeepTheirResponses(t *testing.T) {
	const n = 30
	var recorded, live []string
	for i := range n {
		tool := "t" + itoa(i)
		recorded = append(recorded, call(i+1, tool, `{}`, text("answer of "+tool)))
		live = append(live, matchCall(100+i, tool, `{}`))
	}
	w, _ := serveCassette(t, cassette(recorded...), nil)
	for round := range 20 {
		w.send("[" + strings.Join(live, ",") + "]")
		var batch []struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(<-w.lines), &batch); err != nil || len(batch) != n {
			t.Fatalf("round %d: batch answer: %v, %d answers", round, err, len(batch))
		}
		for _, a := range batch {
			want := "answer of t" + itoa(a.ID-100)
			if len(a.Result.Content) != 1 || a.Result.Content[0].Text != want {
				t.Fatalf("round %d: the answer to id %d is %+v, want %q", round, a.ID, a.Result, want)
			}
		}
	}
	w.close()
}
