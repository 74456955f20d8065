package recorder

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/guard"
)

// echoUpstream is a resumable Streamable HTTP server that keeps every event
// it sent, priming events with {} or empty data included, and answers a GET
// with Last-Event-ID by sending its whole store again (every stream's, as
// server-everything's event store does) before what is new. It keeps what
// it wrote to each response, in order.
type echoUpstream struct {
	mu    sync.Mutex // guards store and wrote
	store []string   // the events sent, each as written
	wrote []string   // what each response's body was
	next  int        // the number of the next event
}

func (u *echoUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	defer u.mu.Unlock()
	var out strings.Builder
	event := func(data string) {
		u.next++
		ev := fmt.Sprintf("id: %d\ndata: %s\n\n", u.next, data)
		if data == "-" {
			ev = fmt.Sprintf("id: %d\n\n", u.next) // an id, no data
		}
		u.store = append(u.store, ev)
		out.WriteString(ev)
	}
	w.Header().Set("Mcp-Session-Id", "s1")
	msg := string(body)
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		for _, ev := range u.store {
			out.WriteString(ev) // the echoes
		}
		if r.Header.Get("Last-Event-ID") == "4" {
			event(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
			event("{}")
			event("-")
		}
	case strings.Contains(msg, `"initialize"`):
		event("{}")
		event(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}`)
	case strings.Contains(msg, `"tools/call"`):
		event("")
		event(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)
		// The stream ends before the answer: the client resumes it.
	default:
		u.wrote = append(u.wrote, "")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	u.wrote = append(u.wrote, out.String())
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, out.String())
}

// TestHTTPTapRecordsEchoesOnce: a client resumes a stream twice and the
// upstream sends every event it sent before again, priming events with {}
// and empty data included. The client gets every byte; the cassette holds
// each message once and no priming data.
func TestHTTPTapRecordsEchoesOnce(t *testing.T) {
	for _, tt := range []struct {
		name  string
		guard Filter
	}{
		{"no guard", nil},
		{"a guard that passes all", passAll{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := &echoUpstream{}
			upSrv := httptest.NewServer(up)
			t.Cleanup(upSrv.Close)
			tapURL, rec := startTapWith(t, upSrv.URL+"/mcp", &HTTPOptions{Guard: tt.guard})
			checkEchoesOnce(t, up, tapURL, rec)
		})
	}
}

// passAll is a guard that forwards every message as it came.
type passAll struct{}

func (passAll) FromClient(_ string, msg []byte) guard.Verdict { return guard.Verdict{Forward: msg} }
func (passAll) FromServer(_ string, msg []byte) guard.Verdict { return guard.Verdict{Forward: msg} }

func checkEchoesOnce(t *testing.T, up *echoUpstream, tapURL string, rec *Recorder) {
	t.Helper()
	steps := []struct {
		method, body, lastID string
	}{
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, ""},
		{"POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work"}}`, ""},
		{"GET", "", "4"}, // resumes the tools/call stream: echoes, then the answer
		{"GET", "", "7"}, // again: only echoes
	}
	var got []string
	for i, s := range steps {
		req, err := http.NewRequestWithContext(testCtx(t), s.method, tapURL+"/mcp", strings.NewReader(s.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if i > 0 {
			req.Header.Set("Mcp-Session-Id", "s1")
		}
		if s.lastID != "" {
			req.Header.Set("Last-Event-ID", s.lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	up.mu.Lock()
	want := up.wrote
	up.mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("the client got %d bodies, the upstream wrote %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: the client got\n%q\nthe upstream wrote\n%q", i+1, got[i], want[i])
		}
	}

	c := rec.Cassette()
	counts := map[string]int{}
	for i, in := range c.Interactions {
		for _, m := range serverMessages(&in) {
			counts[m]++
			if strings.TrimSpace(m) == "{}" || strings.TrimSpace(m) == "" {
				t.Errorf("interaction %d holds %q, a priming event's data", i+1, m)
			}
		}
	}
	wantMsgs := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	}
	for _, m := range wantMsgs {
		if counts[m] != 1 {
			t.Errorf("the cassette holds %s %d times, want once", m, counts[m])
		}
	}
	if len(counts) != len(wantMsgs) {
		t.Errorf("the cassette holds %d server messages, want %d: %v", len(counts), len(wantMsgs), counts)
	}
}

// serverMessages lists what the server sent in an interaction, messages and
// raw lines alike.
func serverMessages(in *cassettes.Interaction) []string {
	var out []string
	if in.From == cassettes.FromServer {
		switch {
		case in.Request != nil:
			out = append(out, string(in.Request))
		case in.Notification != nil:
			out = append(out, string(in.Notification))
		case in.Raw != nil:
			out = append(out, *in.Raw)
		}
	}
	msgs := in.Exchange
	if in.Response != nil {
		msgs = append(msgs[:len(msgs):len(msgs)], *in.Response)
	}
	for _, m := range msgs {
		if m.From != cassettes.FromServer {
			continue
		}
		if m.Raw != nil {
			out = append(out, *m.Raw)
		} else {
			out = append(out, string(m.Message))
		}
	}
	return out
}

// BenchmarkEventLog: what the tap spends per SSE event on telling echoes,
// for N events of one session, each sent twice.
func BenchmarkEventLog(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working on it"}}`)
	for _, n := range []int{1e3, 1e4, 1e5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = strconv.Itoa(i)
			}
			b.ReportAllocs()
			for b.Loop() {
				l := newEventLog()
				for _, id := range ids {
					l.first("s1", id, data)
				}
				for _, id := range ids {
					if l.first("s1", id, data) {
						b.Fatal("an echo taken for new")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/item")
		})
	}
}
