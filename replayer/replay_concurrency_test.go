package replayer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// inFlight is how many requests are in flight at once.
const inFlight = 1000

// numberedCassette records n calls of echo, call i with argument i and
// result text "r<i>".
func numberedCassette(n int) string {
	ins := []string{initialize}
	for i := range n {
		ins = append(ins, call(i+1, "echo", `{"n":`+itoa(i)+`}`, text("r"+itoa(i))))
	}
	return cassette(ins...)
}

func numberedCall(id string, n int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"n":` + itoa(n) + `}}}`
}

// pairing reads one answer and returns its id and result text.
func pairing(t *testing.T, line string) (id, text string) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error != nil || len(m.Result.Content) != 1 {
		t.Fatalf("not a result: %q", line)
	}
	return string(m.ID), m.Result.Content[0].Text
}

// TestConcurrentStdioReplay sends 1,000 calls before reading any answer; a
// delay keeps them all in flight. Each answer carries its request's id and
// its request's recorded result.
func TestConcurrentStdioReplay(t *testing.T) {
	w, _ := serveCassette(t, numberedCassette(inFlight), &Options{Latency: Latency{Fixed: 200 * time.Millisecond}})
	want := map[string]string{}
	var sb strings.Builder
	for i := range inFlight {
		// Ids of both types, none equal to the recorded ones.
		id := `"req-` + itoa(i) + `"`
		if i%2 == 1 {
			id = itoa(100000 + i)
		}
		want[id] = "r" + itoa(i)
		sb.WriteString(numberedCall(id, i) + "\n")
	}
	go io.WriteString(w.w, sb.String())
	for range inFlight {
		id, text := pairing(t, recvLine(t, w))
		if want[id] != text {
			t.Fatalf("id %s got %q, want %q", id, text, want[id])
		}
		delete(want, id)
	}
	if len(want) != 0 {
		t.Errorf("%d requests unanswered", len(want))
	}
}

// TestConcurrentHTTPReplay runs 20 sessions of 50 calls each, all 1,000 in
// flight at once.
func TestConcurrentHTTPReplay(t *testing.T) {
	const sessions = 20
	c := numberedCassette(inFlight)
	srv, _ := serveHTTP(t, c, nil)
	u := srv.URL + "/mcp"
	sids := make([]string, sessions)
	for s := range sessions {
		ex := do(t, "POST", u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
		sids[s] = ex.header.Get("Mcp-Session-Id")
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, inFlight)
	for i := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sid := sids[i%sessions]
			id := itoa(7000 + i)
			ex := do(t, "POST", u, numberedCall(id, i), map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
			body := ex.body
			if ev := events(body); len(ev) > 0 {
				body = ev[len(ev)-1]
			}
			gotID, text := pairing(t, body)
			if gotID != id || text != "r"+itoa(i) {
				errs <- fmt.Errorf("request %s (argument %d) got id %s text %q", id, i, gotID, text)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
