package replayer

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseLines reads a stream line by line: next returns the next event with
// data, or "" and false when a keep-alive comment comes first (the stream
// is still open after what was read).
type sseLines struct {
	t  *testing.T
	br *bufio.Reader
}

func (s sseLines) next() (ev sseEvent, open bool) {
	s.t.Helper()
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("the stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, ": keep-alive"):
			return ev, false
		case line == "" && ev.data != "":
			return ev, true
		case strings.HasPrefix(line, "id: "):
			ev.id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
}

// stillOpen reads to the next keep-alive comment: the stream did not end.
func (s sseLines) stillOpen(what string) {
	s.t.Helper()
	if ev, open := s.next(); open {
		s.t.Fatalf("%s: event %+v, want only keep-alives", what, ev)
	}
}

// openGET opens a GET stream of session sid (resuming after lastID when
// set) and reports its status; the stream is read with the returned
// sseLines and closed with t's cleanup or the returned func.
func openGET(t *testing.T, ctx context.Context, u, sid, lastID string) (int, sseLines, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeIt := func() { cancel(); resp.Body.Close() }
	t.Cleanup(closeIt)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode == 200 && ct != "text/event-stream" {
		t.Errorf("GET (Last-Event-ID %q): Content-Type %q", lastID, ct)
	}
	return resp.StatusCode, sseLines{t, bufio.NewReader(resp.Body)}, closeIt
}

// resumeSession starts a replay of a resumable tools/call, with keep-alives
// every millisecond, opens a session and its standalone GET stream, and
// returns the endpoint, the session id, and onStandalone, which sends a
// notification and waits for it on the standalone stream.
func resumeSession(t *testing.T, ctx context.Context) (u, sid string, onStandalone func(data string)) {
	t.Helper()
	srv, h := serveHTTP(t, cassette(initialize, resumableCall()), &HTTPOptions{KeepAlive: time.Millisecond})
	u = srv.URL + "/mcp"
	sid = do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	status, standalone, _ := openGET(t, ctx, u, sid, "")
	if status != 200 {
		t.Fatalf("the standalone GET: %d", status)
	}
	onStandalone = func(data string) {
		t.Helper()
		if h.e.Notify("notifications/message", json.RawMessage(`{"level":"info","data":"`+data+`"}`)) != 1 {
			t.Fatalf("notification %s reached no session", data)
		}
		for {
			if ev, open := standalone.next(); open {
				if !strings.Contains(ev.data, data) {
					t.Fatalf("standalone stream: %+v, want %s", ev, data)
				}
				return
			}
		}
	}
	onStandalone("first")
	return u, sid, onStandalone
}

// TestResumedPOSTStreamStaysOpen: a GET with Last-Event-ID of a POST
// stream dropped before its response gets the response and then stays
// open, as the live server's does, beside the standalone GET stream, which
// still gets the session's later messages. Before, it ended after the
// response: a TypeScript client then reconnected without Last-Event-ID and
// got 409 twice ("Maximum reconnection attempts (2) exceeded").
func TestResumedPOSTStreamStaysOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	u, sid, onStandalone := resumeSession(t, ctx)
	postCtx, drop := context.WithCancel(ctx)
	resp := openPOST(t, postCtx, u, sid, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"t"}}}`)
	sc := bufio.NewScanner(resp.Body)
	readEvent(sc)
	roots, _ := readEvent(sc)
	drop()
	resp.Body.Close()
	var rootsReq struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(roots.data), &rootsReq); err != nil {
		t.Fatalf("roots/list event %+v: %v", roots, err)
	}
	do(t, "POST", u, `{"jsonrpc":"2.0","id":`+string(rootsReq.ID)+`,"result":{"roots":[]}}`, map[string]string{"Mcp-Session-Id": sid})
	status, resumed, _ := openGET(t, ctx, u, sid, roots.id)
	if status != 200 {
		t.Fatalf("resuming the POST stream: %d", status)
	}
	if ev, _ := resumed.next(); ev.id != "s3" || !strings.Contains(ev.data, `"id":"a"`) {
		t.Fatalf("resumed POST stream: %+v, want the response (s3)", ev)
	}
	resumed.stillOpen("the resumed POST stream after its response")
	onStandalone("second")
	resumed.stillOpen("the resumed POST stream")
}

// TestUnknownLastEventIDLeavesTheGETStream: a GET with a Last-Event-ID of
// no stream of the session, while the standalone GET stream is open, gets
// 200 and a stream that stays open, and the standalone stream stays with
// its client. Before, it took over the standalone stream, whose client
// (reconnecting without Last-Event-ID, having had no event id) got 409.
func TestUnknownLastEventIDLeavesTheGETStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	u, sid, onStandalone := resumeSession(t, ctx)
	status, unknown, _ := openGET(t, ctx, u, sid, "e17")
	if status != 200 {
		t.Fatalf("resuming an unknown id: %d", status)
	}
	unknown.stillOpen("the stream of an unknown id")
	onStandalone("second")
	unknown.stillOpen("the stream of an unknown id")
}

// TestGETAfterTheClientClosedIt: a client that closed its GET stream
// opens a new one without Last-Event-ID at once and gets 200, not 409,
// even when the server has not yet noticed that the old connection is
// gone; a second GET stream while one is open is 409.
func TestGETAfterTheClientClosedIt(t *testing.T) {
	srv, h := serveHTTP(t, cassette(initialize), &HTTPOptions{KeepAlive: -1})
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range 20 {
		status, s, closeIt := openGET(t, ctx, u, sid, "")
		if status != 200 {
			t.Fatalf("GET %d after the client closed the one before: %d, want 200", i, status)
		}
		if h.e.Notify("notifications/message", json.RawMessage(`{"level":"info","data":"x"}`)) != 1 {
			t.Fatal("the notification reached no session")
		}
		if ev, _ := s.next(); !strings.Contains(ev.data, "notifications/message") {
			t.Fatalf("GET %d: %+v", i, ev)
		}
		if i == 0 {
			if again, _, _ := openGET(t, ctx, u, sid, ""); again != http.StatusConflict {
				t.Errorf("a second GET stream while one is open: %d, want 409", again)
			}
		}
		closeIt()
	}
}
