package replayer_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestUpstreamHTTPSSE: a live server of the HTTP+SSE transport (2024-11-05)
// is found behind its SSE URL and spoken to: initialize, the initialized
// notification, a tool call, each answered on its event stream; and a
// Streamable HTTP server at /mcp still is.
func TestUpstreamHTTPSSE(t *testing.T) {
	for _, kind := range []string{testpeer.GoSDK, testpeer.MCPGo} {
		for _, path := range []string{"/sse", "/mcp"} {
			t.Run(kind+path, func(t *testing.T) {
				h, err := testpeer.HTTPHandler(kind, testpeer.HTTPServerOptions{})
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				u, err := replayer.DialUpstream(replayer.UpstreamOptions{URL: srv.URL + path})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { u.Close() })
				in, err := u.Call(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(in.Response.Message), `"protocolVersion":"2024-11-05"`) {
					t.Fatalf("initialize answered %s", in.Response.Message)
				}
				if err := u.Notify(t.Context(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
					t.Fatal(err)
				}
				in, err = u.Call(t.Context(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over sse"}}}`))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(in.Response.Message), "over sse") {
					t.Fatalf("tools/call answered %s", in.Response.Message)
				}
				if err := u.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
	}
}
