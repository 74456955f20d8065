package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestUpstreamHTTPSSEBinary: new-episodes and cassette verify work against
// a live server of the HTTP+SSE transport (2024-11-05) given by its SSE
// URL, for the go-sdk and mcp-go servers: the call that the cassette
// lacks is forwarded over the event stream and kept, and the cassette
// then verifies against the same server.
func TestUpstreamHTTPSSEBinary(t *testing.T) {
	const init20241105 = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, kind := range []string{testpeer.GoSDK, testpeer.MCPGo} {
		t.Run(kind, func(t *testing.T) {
			h, err := testpeer.HTTPHandler(kind, testpeer.HTTPServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			// A cassette of the handshake alone, taken from the server's
			// Streamable HTTP endpoint.
			u, err := replayer.DialUpstream(replayer.UpstreamOptions{URL: srv.URL + "/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			in, err := u.Call(testContext(t), []byte(init20241105))
			u.Close()
			if err != nil {
				t.Fatal(err)
			}
			path := tempCassette(t)
			c := cassettes.New()
			c.Interactions = append(c.Interactions, *in)
			if err := cassettes.Save(path, c); err != nil {
				t.Fatal(err)
			}

			p := start(t, "replay", "--mode", "new-episodes", "-c", path, "--upstream", srv.URL+"/sse")
			p.send(t, init20241105)
			if m := p.recv(t); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			p.send(t, initialized)
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over sse"}}}`)
			m := p.recv(t)
			if text, _ := json.Marshal(m); m["result"] == nil || !strings.Contains(string(text), "over sse") {
				t.Fatalf("the forwarded call answered %v", m)
			}
			p.stdin.Close()
			if s := p.wait(t); s != 0 {
				t.Fatalf("replay exited %d:\n%s", s, p.stderr)
			}
			saved, _ := os.ReadFile(path)
			if !strings.Contains(string(saved), "over sse") {
				t.Fatalf("the new episode was not kept:\n%s", saved)
			}

			v := start(t, "cassette", "verify", "-c", path, "--upstream", srv.URL+"/sse")
			report, _ := readAll(v)
			if s := v.wait(t); s != 0 {
				t.Fatalf("verify exited %d:\n%s\n%s", s, report, v.stderr)
			}
		})
	}
}

// TestRecordStdioToHTTPSSE: record --upstream URL/sse with a stdio client
// records a server of the HTTP+SSE transport (the bridge finds it behind
// the refused POST of initialize), for the go-sdk and mcp-go servers.
func TestRecordStdioToHTTPSSE(t *testing.T) {
	for _, kind := range []string{testpeer.GoSDK, testpeer.MCPGo} {
		t.Run(kind, func(t *testing.T) {
			h, err := testpeer.HTTPHandler(kind, testpeer.HTTPServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			path := tempCassette(t)
			p := start(t, "record", "-c", path, "--upstream", srv.URL+"/sse")
			p.send(t, initReq)
			if m := p.recv(t); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			p.send(t, initialized)
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"recorded over sse"}}}`)
			if m := p.recv(t); m["result"] == nil {
				t.Fatalf("tools/call: %v", m)
			}
			p.stdin.Close()
			if s := p.wait(t); s != 0 {
				t.Fatalf("record exited %d:\n%s", s, p.stderr)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Interactions) != 3 {
				t.Errorf("the cassette holds %d interactions, want 3 (initialize, initialized, the call)", len(c.Interactions))
			}
			saved, _ := os.ReadFile(path)
			if strings.Count(string(saved), "recorded over sse") < 2 {
				t.Errorf("the call and its answer are not both recorded:\n%s", saved)
			}
		})
	}
}
