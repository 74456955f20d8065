package replayer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// mountedEngine is an engine of a cassette with one echo call.
func mountedEngine(t *testing.T) *Engine {
	t.Helper()
	c, err := cassettes.Parse("test.json", []byte(cassette(initialize, call(1, "echo", `{}`, text("mounted")))))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestHandlerMounted serves the handler under a prefix, by http.StripPrefix
// and by mux patterns that keep the prefix, to a go-sdk client over
// Streamable HTTP and over HTTP+SSE (whose endpoint event must lead the
// client back under the prefix).
func TestHandlerMounted(t *testing.T) {
	mounts := []struct {
		name  string
		mount func(mux *http.ServeMux, h http.Handler)
	}{
		{"StripPrefix", func(mux *http.ServeMux, h http.Handler) { mux.Handle("/api/", http.StripPrefix("/api", h)) }},
		{"mux paths", func(mux *http.ServeMux, h http.Handler) {
			for _, p := range []string{"/api/mcp", "/api/sse", "/api/message"} {
				mux.Handle(p, h)
			}
		}},
		{"mux subtree", func(mux *http.ServeMux, h http.Handler) { mux.Handle("/api/", h) }},
	}
	for _, m := range mounts {
		for _, tr := range []string{"streamable", "sse"} {
			t.Run(m.name+"/"+tr, func(t *testing.T) {
				h := mountedEngine(t).Handler(nil)
				mux := http.NewServeMux()
				m.mount(mux, h)
				srv := httptest.NewServer(mux)
				t.Cleanup(func() {
					h.Close()
					srv.Close()
				})
				var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/api/mcp"}
				if tr == "sse" {
					transport = &mcp.SSEClientTransport{Endpoint: srv.URL + "/api/sse"}
				}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
				cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != "mounted" {
					t.Errorf("got %q, want %q", got, "mounted")
				}
			})
		}
	}
}

// TestHandlerAnyPath: Streamable HTTP is served at any path, and the
// HTTP+SSE endpoint is named relative to the stream, with the configured
// MessagePath.
func TestHandlerAnyPath(t *testing.T) {
	srv, _ := serveHTTP(t, cassette(initialize), &HTTPOptions{SSEPath: "events", MessagePath: "post"})
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, p := range []string{"/", "/mcp", "/deep/under/a/prefix", "/sse"} {
		if got := do(t, "POST", srv.URL+p, init, nil); got.status != 200 || got.header.Get("Mcp-Session-Id") == "" {
			t.Errorf("POST initialize to %s: %d %s, want 200 with a session", p, got.status, got.body)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/x/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var event, data string
	for line, _ := br.ReadString('\n'); line != "\n"; line, _ = br.ReadString('\n') {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = strings.TrimSpace(v)
		}
		if line == "" {
			t.Fatalf("the stream ended before its first event")
		}
	}
	if event != "endpoint" || !strings.HasPrefix(data, "post?sessionId=") {
		t.Fatalf("first event %q %q, want endpoint post?sessionId=...", event, data)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if got := do(t, "POST", srv.URL+"/x/"+data, ping, nil); got.status != http.StatusAccepted {
		t.Errorf("POST to the endpoint %s: %d %s, want 202", data, got.status, got.body)
	}
}

// TestControlOptIn: the control endpoint answers only when HTTPOptions
// asks for it, at the end of any path; otherwise it is 404.
func TestControlOptIn(t *testing.T) {
	for _, tc := range []struct {
		control bool
		path    string
		status  int
	}{
		{false, "/_mcpmock/notify", 404},
		{false, "/api/_mcpmock/notify", 404},
		{true, "/_mcpmock/notify", 200},
		{true, "/api/_mcpmock/notify", 200},
	} {
		t.Run(fmt.Sprint(tc.control, tc.path), func(t *testing.T) {
			srv, _ := serveHTTP(t, cassette(initialize), &HTTPOptions{Control: tc.control})
			got := do(t, "POST", srv.URL+tc.path+"?method=notifications/tools/list_changed", "", nil)
			if got.status != tc.status {
				t.Errorf("POST %s: %d %s, want %d", tc.path, got.status, got.body, tc.status)
			}
			if tc.status == 200 && !strings.Contains(got.body, `"sessions":0`) {
				t.Errorf("POST %s: %s, want {\"sessions\":0}", tc.path, got.body)
			}
		})
	}
}

// TestMaxBodyBytesRule: 0 means 64 MiB (a body announced past it is
// refused before it is read), a negative value no bound: a body past
// 64 MiB is read and answered. recorder.HTTPOptions has the same rule
// (recorder/http_limit_test.go).
func TestMaxBodyBytesRule(t *testing.T) {
	t.Run("zero", func(t *testing.T) {
		srv, _ := serveHTTP(t, cassette(initialize), nil)
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", jsonrpc.DefaultMaxLine+1)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), fmt.Sprint(jsonrpc.DefaultMaxLine)) {
			t.Errorf("%d %s, want 413 naming %d", resp.StatusCode, body, jsonrpc.DefaultMaxLine)
		}
	})
	t.Run("negative", func(t *testing.T) {
		h := mountedEngine(t).Handler(&HTTPOptions{MaxBodyBytes: -1})
		t.Cleanup(h.Close)
		pad := jsonrpc.DefaultMaxLine + 1
		body := io.MultiReader(
			strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"pad":"`),
			io.LimitReader(repeatByte('x'), int64(pad)),
			strings.NewReader(`"}}`))
		r := httptest.NewRequest("POST", "/mcp", body)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Errorf("a body of %d bytes: %d %.200s, want 200", pad, w.Code, w.Body)
		}
	})
}

// repeatByte is an endless reader of one byte.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
