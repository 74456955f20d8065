package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestGuardBridges is TestGuardStdio through the two bridges of the real
// binary, with go-sdk and mcp-go clients: a stdio client before an HTTP
// server (--upstream URL, Streamable HTTP or HTTP+SSE at /sse), and an HTTP
// client before a stdio server (--listen ADDR -- COMMAND). Every policy applies as on the taps, the
// audit file holds one line per decision, the cassette holds the guarded
// conversation, and a call that times out is cancelled upstream.
func TestGuardBridges(t *testing.T) {
	for _, pairing := range []string{"stdio-to-http", "stdio-to-sse", "http-to-stdio"} {
		for _, lib := range []string{"gosdk", "mcpgo"} {
			t.Run(pairing+"/"+lib, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				audit := filepath.Join(dir, "audit.jsonl")
				cassette := filepath.Join(dir, "c.json")
				args := append([]string{"record", "-c", cassette, "--audit-file", audit}, policyFlags...)
				var want []string
				var stderr string
				switch pairing {
				case "stdio-to-http", "stdio-to-sse":
					up, cancelled := cancelWatch(t, testpeer.GoSDK, testpeer.HTTPServerOptions{})
					path := "/mcp"
					if pairing == "stdio-to-sse" {
						path = "/sse" // the HTTP+SSE transport of 2024-11-05
					}
					p := startGuard(t, nil, append(args, "--upstream", up+path)...)
					c := stdioClient(t, lib, p)
					want = policyCalls(t, c, "there is no terminal to ask on")
					select {
					case body := <-cancelled:
						if !strings.Contains(body, "no answer within 500ms") {
							t.Errorf("notifications/cancelled upstream = %s", body)
						}
					case <-testContext(t).Done():
						t.Fatal("no notifications/cancelled reached the server")
					}
					c.close()
					if status := p.wait(t); status != 0 {
						t.Errorf("record exited with %d", status)
					}
					stderr = p.stderr.String()
				case "http-to-stdio":
					args = append(append(args, "--listen", "127.0.0.1:0", "--"), peerCommand(testpeer.GoSDK)...)
					p, url := startListening(t, args...)
					c := httpClient(t, lib, url)
					want = policyCalls(t, c, "there is no terminal to ask on")
					c.close()
					if status := stopAndWait(t, p); status != 0 {
						t.Errorf("record exited with %d", status)
					}
					stderr = p.stderr.String()
				}
				got, _ := readAudit(t, audit)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("audit (-want +got):\n%s", diff)
				}
				if !strings.Contains(stderr, "⚑ tool get_weather: hidden from the client (--deny-tools get_weather)") {
					t.Errorf("the log does not show the hidden tool:\n%s", stderr)
				}
				checkGuardedCassette(t, cassette)
				if pairing != "http-to-stdio" {
					checkGuardedReplay(t, cassette, lib)
				}
			})
		}
	}
}

// checkGuardedReplay replays the cassette of policyCalls to a stdio client
// of lib: the replayed server is the guarded one (tools/list without the
// denied tool, -32602 for a call to it).
func checkGuardedReplay(t *testing.T, cassette, lib string) {
	t.Helper()
	p := startGuard(t, nil, "replay", "-c", cassette)
	c := stdioClient(t, lib, p)
	ctx := testContext(t)
	names, err := c.list(ctx)
	if err != nil {
		t.Fatalf("replayed tools/list: %v", err)
	}
	if slices.Contains(names, "get_weather") || !slices.Contains(names, "add") {
		t.Errorf("replayed tools/list = %v, want add and no get_weather", names)
	}
	if _, _, code, err := c.call(ctx, "get_weather", map[string]any{"location": "Paris"}); err != nil || code != -32602 {
		t.Errorf("replayed call to the denied tool = code %d, %v; want -32602", code, err)
	}
	c.close()
	p.wait(t)
}

// TestGuardListChangedBridges: after the server's list_changed, the guard
// lists the tools itself through either bridge, and neither its request
// nor the answer reaches the client or the cassette. Through the bridge to
// an HTTP server the list_changed comes on the bridge's GET stream and the
// guard's tools/list is a POST of its own on the bridge's session; through
// the bridge to a stdio server it is a line to the server's stdin.
func TestGuardListChangedBridges(t *testing.T) {
	for _, tc := range []struct{ pairing, lib string }{
		{"stdio-to-http", "gosdk/2025-11-25"},
		{"stdio-to-http", "mcpgo"},
		{"http-to-stdio", "gosdk"},
		{"http-to-stdio", "mcpgo"},
	} {
		t.Run(tc.pairing+"/"+tc.lib, func(t *testing.T) {
			t.Parallel()
			cassette := filepath.Join(t.TempDir(), "c.json")
			args := []string{"record", "-c", cassette, "--confirm", "destructive", "--trust-server"}
			switch tc.pairing {
			case "stdio-to-http":
				s := changingServer()
				up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
				t.Cleanup(up.Close)
				p := startGuard(t, nil, append(args, "--upstream", up.URL+"/mcp")...)
				c := stdioClient(t, tc.lib, p)
				listChangedCalls(t, c, p.stderr)
				c.close()
				p.wait(t)
			case "http-to-stdio":
				p, url := startListening(t, append(args, "--listen", "127.0.0.1:0",
					"--", "env", "-u", beMain, changingServerEnv+"=1", os.Args[0], "-test.run=^$")...)
				c := httpClient(t, tc.lib, url)
				listChangedCalls(t, c, p.stderr)
				c.close()
				if status := stopAndWait(t, p); status != 0 {
					t.Errorf("record exited with %d", status)
				}
			}
			checkNoOwnTraffic(t, cassette)
		})
	}
}
