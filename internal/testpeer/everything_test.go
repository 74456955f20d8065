package testpeer

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEverythingLive: the server-everything look-alikes, over pipes and
// over Streamable HTTP, send what the client's notifications cause after
// them, and a call's notifications before its result, every run the same.
func TestEverythingLive(t *testing.T) {
	for _, kind := range EverythingKinds {
		for _, transport := range []string{"stdio", "http", "stdio-mcpgo-client", "http-mcpgo-client"} {
			t.Run(kind+"/"+transport, func(t *testing.T) {
				t.Parallel()
				var run func() (Wire, error)
				switch transport {
				case "stdio", "stdio-mcpgo-client":
					cr, sw := io.Pipe()
					sr, cw := io.Pipe()
					done := make(chan error, 1)
					go func() { done <- Serve(t.Context(), kind, sr, sw) }()
					t.Cleanup(func() { cw.Close(); <-done })
					run = func() (Wire, error) { return RunEverything(t.Context(), cr, cw, EverythingOptions{}) }
					if transport == "stdio-mcpgo-client" {
						run = func() (Wire, error) { return RunEverythingMCPGo(t.Context(), cr, cw, EverythingOptions{}) }
					}
				case "http", "http-mcpgo-client":
					h, err := NewEverythingHTTP(kind)
					if err != nil {
						t.Fatal(err)
					}
					s := httptest.NewServer(h)
					t.Cleanup(func() { s.Close(); h.Close() })
					run = func() (Wire, error) { return RunEverythingHTTP(t.Context(), s.URL+"/mcp", EverythingOptions{}) }
					if transport == "http-mcpgo-client" {
						run = func() (Wire, error) { return RunEverythingMCPGoHTTP(t.Context(), s.URL+"/mcp", EverythingOptions{}) }
					}
				}
				w, err := run()
				if err != nil {
					t.Fatalf("%v; the wire:\n%s", err, w)
				}
				if kind == MCPGoEverything && strings.HasPrefix(transport, "http") {
					w = w.SortCalls()
				}
				if p := EverythingCauses(w); len(p) > 0 {
					t.Errorf("out of order: %q", p)
				}
				if diff := cmp.Diff(EverythingWire(0), w); diff != "" {
					t.Errorf("the wire (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestEverythingCauses: the order check finds each effect moved before its
// cause, and a call's notification moved after its result.
func TestEverythingCauses(t *testing.T) {
	want := EverythingWire(0)
	move := func(from, to int) Wire {
		w := append(Wire(nil), want...)
		line := w[from]
		w = append(w[:from], w[from+1:]...)
		return append(w[:to], append(Wire{line}, w[to:]...)...)
	}
	if p := EverythingCauses(want); len(p) != 0 {
		t.Fatalf("the live wire: %q", p)
	}
	tests := []struct {
		name string
		w    Wire
		want string
	}{
		{"roots/list before initialized", move(5, 2), `"< roots/list" (message 3) came before its cause "> notifications/initialized"`},
		{"list_changed before initialized", move(3, 2), `"< notifications/tools/list_changed" (message 3) came before its cause`},
		{"roots/list before roots/list_changed", move(11, 10), `"< roots/list" (message 11) came before its cause "> notifications/roots/list_changed" (message 12)`},
		{"log before the reply", move(7, 6), `came before its cause "> result roots/list 2:`},
		{"resources/updated after the result", move(15, 16), `"< notifications/resources/updated test://static/resource/1" (message 17) came after`},
		{"progress after the result", move(18, 21), `"< notifications/progress 1/3 \"step 1 of 3\"" (message 22) came after`},
		{"no roots/list_changed", append(want[:10:10], want[11:]...), `no "> notifications/roots/list_changed"`},
	}
	for _, tt := range tests {
		got := strings.Join(EverythingCauses(tt.w), "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if diff := cmp.Diff(want, move(15, 16).SortCalls()); diff != "" {
		t.Errorf("SortCalls (-want +got):\n%s", diff)
	}
}

// TestEverythingHTTPInitializedAnswered: over Streamable HTTP, the POST of
// notifications/initialized is answered 202 with no body, even when the
// session's GET stream is open before it and the effects start at once,
// and those effects come on the GET stream. mcp-go puts what a session
// sends while a POST is being handled on that POST's response, and a
// client drops a notification's response unread (go-sdk closes it), so
// list_changed sent too early was lost.
func TestEverythingHTTPInitializedAnswered(t *testing.T) {
	for _, kind := range EverythingKinds {
		t.Run(kind, func(t *testing.T) {
			h, err := NewEverythingHTTP(kind)
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewServer(h)
			t.Cleanup(func() { s.Close(); h.Close() })
			for i := range 20 {
				sid := postJSON(t, s.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`, http.StatusOK).Header.Get("Mcp-Session-Id")
				// What the GET stream lacks after 10 s is not coming.
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/mcp", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Mcp-Session-Id", sid)
				get, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp := postJSON(t, s.URL+"/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted)
				if body, _ := io.ReadAll(resp.Body); len(body) > 0 {
					t.Errorf("session %d: notifications/initialized answered with a body (%s): %s", i, resp.Header.Get("Content-Type"), body)
				}
				// The effects come on the GET stream: two list_changed,
				// then roots/list.
				events := bufio.NewScanner(get.Body)
				changed := 0
				for changed < 2 && events.Scan() {
					if strings.Contains(events.Text(), "notifications/tools/list_changed") {
						changed++
					}
				}
				get.Body.Close()
				if changed < 2 {
					t.Errorf("session %d: the GET stream carried %d notifications/tools/list_changed, want 2 (%v)", i, changed, events.Err())
				}
			}
		})
	}
}

// postJSON posts body to url in session sid ("" for none), checks the
// answer's status and returns it, its body unread.
func postJSON(t *testing.T, url, sid, body string, status int) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != status {
		t.Fatalf("POST %s: status %d, want %d", body, resp.StatusCode, status)
	}
	return resp
}
