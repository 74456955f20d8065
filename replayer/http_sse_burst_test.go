package replayer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// dialSSE opens an HTTP+SSE stream of the server at base and returns
// what reads it; the stream is closed when the test ends.
func dialSSE(t *testing.T, base string) *bufio.Scanner {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return sc
}

// TestSSEBurstAnswersWhole: over HTTP+SSE, answers are copied into the
// session's queue and the plans' memory is used again (releaseAll), in
// two buffers that the POSTs and the stream trade (take). A burst of calls
// of every size, read as they come, gets each answer whole, under its own
// id, in order: a buffer used again before the stream wrote it would show
// another answer's bytes.
func TestSSEBurstAnswersWhole(t *testing.T) {
	const distinct, calls = 64, 2000
	answer := func(i int) string { return fmt.Sprintf("m%d-%s", i, strings.Repeat("x", i*97)) }
	var recorded []string
	for i := range distinct {
		recorded = append(recorded, call(i+1, "echo", fmt.Sprintf(`{"text":"m%d"}`, i), text(answer(i))))
	}
	srv, h := serveHTTP(t, cassette(recorded...), nil)
	defer h.Close()
	sc := dialSSE(t, srv.URL)
	data := make(chan string, calls)
	endpoint := make(chan string, 1)
	go func() {
		defer close(data)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			switch {
			case !ok:
			case strings.HasPrefix(d, "message?sessionId="):
				endpoint <- srv.URL + "/" + d
			default:
				data <- d
			}
		}
	}()
	url := <-endpoint
	for k := range calls {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, 1000+k, k%distinct)
		if got := do(t, "POST", url, body, nil); got.status != http.StatusAccepted {
			t.Fatalf("call %d: POST answered %d, want 202", k, got.status)
		}
	}
	for k := range calls {
		d, ok := <-data
		if !ok {
			t.Fatalf("the stream ended after %d answers of %d", k, calls)
		}
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("answer %d is no JSON (%v): %.200s", k, err, d)
		}
		if m.ID != 1000+k || len(m.Result.Content) != 1 || m.Result.Content[0].Text != answer(k%distinct) {
			t.Fatalf("answer %d: id %d, %.80q; want id %d, %.80q", k, m.ID, m.Result.Content, 1000+k, answer(k%distinct))
		}
	}
}
