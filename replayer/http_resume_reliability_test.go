package replayer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one event of a stream: its id and data.
type sseEvent struct{ id, data string }

// getStream opens the session's GET stream, resuming after lastID when it
// is set.
func getStream(t *testing.T, ctx context.Context, u, sid, lastID string) (*http.Response, func() sseEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET stream (Last-Event-ID %q): %d", lastID, resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	next := func() sseEvent {
		t.Helper()
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && ev.data != "":
				return ev
			case strings.HasPrefix(line, "id: "):
				ev.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[len("data: "):]
			}
		}
	}
	return resp, next
}

// numbered is the n of a notification of notifyN.
func numbered(t *testing.T, data string) int {
	t.Helper()
	var m struct {
		Params struct{ Data int } `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event %q: %v", data, err)
	}
	return m.Params.Data
}

// TestGETStreamResumption: the GET stream's events carry ids; a client
// that comes back with Last-Event-ID gets what it missed, in order, then
// the live events; the kept events are bounded.
func TestGETStreamResumption(t *testing.T) {
	srv, h := serveHTTP(t, cassette(initialize), nil)
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	notify := func(n int) {
		if h.e.Notify("notifications/message", json.RawMessage(fmt.Sprintf(`{"level":"info","data":%d}`, n))) != 1 {
			t.Fatalf("notification %d reached no session", n)
		}
	}

	ctx1, cancel1 := context.WithCancel(t.Context())
	resp1, next1 := getStream(t, ctx1, u, sid, "")
	for n := 1; n <= 3; n++ {
		notify(n)
		if ev := next1(); ev.id != fmt.Sprintf("get-%d", n) || numbered(t, ev.data) != n {
			t.Fatalf("event %+v, want id get-%d and notification %d", ev, n, n)
		}
	}
	// The client's connection drops; the server goes on sending.
	cancel1()
	resp1.Body.Close()
	notify(4)
	notify(5)

	// It comes back after get-3 (whether or not the server has noticed
	// that the old stream is gone): 4 and 5, then live.
	resp2, next2 := getStream(t, t.Context(), u, sid, "get-3")
	defer resp2.Body.Close()
	for n := 4; n <= 5; n++ {
		if ev := next2(); ev.id != fmt.Sprintf("get-%d", n) || numbered(t, ev.data) != n {
			t.Fatalf("after resuming: event %+v, want id get-%d and notification %d", ev, n, n)
		}
	}
	notify(6)
	if ev := next2(); ev.id != "get-6" || numbered(t, ev.data) != 6 {
		t.Fatalf("live after resuming: %+v", ev)
	}
	// A second stream without Last-Event-ID is still refused.
	if again := do(t, "GET", u, "", map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}); again.status != 409 {
		t.Errorf("a second GET stream: %d, want 409", again.status)
	}

	// The kept events are bounded: after many, resuming from the first
	// gets only the newest.
	total := 2*resendEvents + 10
	for n := 7; n <= total; n++ {
		notify(n)
		if ev := next2(); numbered(t, ev.data) != n {
			t.Fatalf("event %+v, want notification %d", ev, n)
		}
	}
	resp2.Body.Close()
	resp3, next3 := getStream(t, t.Context(), u, sid, "get-1")
	defer resp3.Body.Close()
	first := numbered(t, next3().data)
	if kept := total - first + 1; first <= 2 || kept < resendEvents || kept >= 2*resendEvents {
		t.Errorf("resuming from get-1 after %d events resends from %d (%d events): want the newest %d to %d", total, first, kept, resendEvents, 2*resendEvents-1)
	}
	for n := first + 1; n <= total; n++ {
		if ev := next3(); ev.id != fmt.Sprintf("get-%d", n) || numbered(t, ev.data) != n {
			t.Fatalf("resent event %+v, want get-%d", ev, n)
		}
	}

	// An id that is none of this stream's: no resend, live events.
	resp3.Body.Close()
	resp4, next4 := getStream(t, t.Context(), u, sid, "e17")
	defer resp4.Body.Close()
	notify(total + 1)
	if ev := next4(); numbered(t, ev.data) != total+1 {
		t.Errorf("after an unknown Last-Event-ID: %+v, want the live notification", ev)
	}
}
