package mcpclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/internal/mcpclient"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// headerLog keeps the headers of the requests a server received.
type headerLog struct {
	mu   sync.Mutex // guards reqs
	reqs []seen
}

type seen struct {
	method, path string
	header       http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, seen{r.Method, r.URL.Path, r.Header.Clone()})
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) all() []seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seen(nil), l.reqs...)
}

func initialize(version string) []byte {
	return jsonrpc.Request(jsonrpc.IntID(1), mcp.MethodInitialize, []byte(`{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"mcpclient-test","version":"1"}}`))
}

var (
	initialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	echoCall    = jsonrpc.Request(jsonrpc.IntID(2), "tools/call", []byte(`{"name":"echo","arguments":{"text":"hi there"}}`))
)

// datas are the messages' data, to print.
func datas(ms []mcpclient.Message) []string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m.Data))
	}
	return s
}

// collect posts body and returns the messages of the answer.
func collect(t *testing.T, c *mcpclient.Client, body []byte) []mcpclient.Message {
	t.Helper()
	var got []mcpclient.Message
	err := c.Post(t.Context(), body, &mcpclient.Handler{Message: func(m mcpclient.Message) bool {
		got = append(got, m)
		return false
	}})
	if err != nil {
		t.Fatalf("post %.60s: %v", body, err)
	}
	return got
}

// TestRealServers runs a session against the go-sdk and mcp-go servers over
// Streamable HTTP (SSE and JSON answers) and HTTP+SSE, chosen or found by
// Auto.
func TestRealServers(t *testing.T) {
	tests := []struct {
		name      string
		kind      string
		opts      testpeer.HTTPServerOptions
		path      string
		transport mcpclient.Transport
		version   string
		session   bool
	}{
		{"gosdk streamable sse", testpeer.GoSDK, testpeer.HTTPServerOptions{}, "/mcp", mcpclient.Streamable, mcp.Version20250618, true},
		{"gosdk streamable json", testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true}, "/mcp", mcpclient.Auto, mcp.Version20251125, true},
		{"gosdk stateless", testpeer.GoSDK, testpeer.HTTPServerOptions{Stateless: true}, "/mcp", mcpclient.Auto, mcp.Version20250326, false},
		{"gosdk http+sse", testpeer.GoSDK, testpeer.HTTPServerOptions{}, "/sse", mcpclient.SSE, mcp.Version20241105, false},
		{"gosdk http+sse auto", testpeer.GoSDK, testpeer.HTTPServerOptions{}, "/sse", mcpclient.Auto, mcp.Version20241105, false},
		{"mcpgo streamable", testpeer.MCPGo, testpeer.HTTPServerOptions{}, "/mcp", mcpclient.Streamable, mcp.Version20250618, true},
		{"mcpgo stateless", testpeer.MCPGo, testpeer.HTTPServerOptions{Stateless: true}, "/mcp", mcpclient.Auto, mcp.Version20250326, false},
		{"mcpgo http+sse", testpeer.MCPGo, testpeer.HTTPServerOptions{}, "/sse", mcpclient.SSE, mcp.Version20241105, false},
		{"mcpgo http+sse auto", testpeer.MCPGo, testpeer.HTTPServerOptions{}, "/sse", mcpclient.Auto, mcp.Version20241105, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := testpeer.HTTPHandler(tt.kind, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var log headerLog
			srv := httptest.NewServer(log.wrap(h))
			t.Cleanup(srv.Close)
			c, err := mcpclient.New(srv.URL+tt.path, &mcpclient.Options{
				Transport: tt.transport,
				Header:    http.Header{"Authorization": {"Bearer t0ken"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			init := collect(t, c, initialize(tt.version))
			if len(init) != 1 || !strings.Contains(string(init[0].Data), `"protocolVersion":"`+tt.version+`"`) {
				t.Fatalf("initialize answered %q, want one result of version %s", datas(init), tt.version)
			}
			if got := c.Version(); got != tt.version {
				t.Errorf("Version() = %q, want %q", got, tt.version)
			}
			if got := c.Session() != ""; got != tt.session {
				t.Errorf("Session() = %q, want a session: %v", c.Session(), tt.session)
			}
			if got := collect(t, c, initialized); len(got) != 0 {
				t.Errorf("notifications/initialized brought %q, want nothing", datas(got))
			}
			got := collect(t, c, echoCall)
			if len(got) != 1 || !strings.Contains(string(got[0].Data), "hi there") {
				t.Fatalf("tools/call echo answered %q", datas(got))
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			var posts, deletes int
			for _, r := range log.all() {
				if r.header.Get("Authorization") != "Bearer t0ken" {
					t.Errorf("%s %s came without the caller's Authorization header", r.method, r.path)
				}
				switch r.method {
				case http.MethodPost:
					posts++
					if tt.session && posts > 1 && r.header.Get(mcp.HeaderSessionID) != c.Session() {
						t.Errorf("POST %d carried session %q, want %q", posts, r.header.Get(mcp.HeaderSessionID), c.Session())
					}
					if tt.path == "/mcp" && posts == 3 {
						if v := r.header.Get(mcp.HeaderProtocolVersion); v != tt.version {
							t.Errorf("tools/call carried %s %q, want %q", mcp.HeaderProtocolVersion, v, tt.version)
						}
					}
				case http.MethodDelete:
					deletes++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.session]; deletes != want {
				t.Errorf("%d DELETEs, want %d", deletes, want)
			}
		})
	}
}

// TestAutoRetarget: a request made before Auto found HTTP+SSE is posted to
// the stream's endpoint all the same.
func TestAutoRetarget(t *testing.T) {
	h, err := testpeer.HTTPHandler(testpeer.GoSDK, testpeer.HTTPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := mcpclient.New(srv.URL+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	early, err := c.NewRequest(t.Context(), echoCall)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, c, initialize(mcp.Version20241105))
	if c.Transport() != mcpclient.SSE {
		t.Fatalf("Transport() = %v after initialize, want SSE", c.Transport())
	}
	collect(t, c, initialized)
	var got []mcpclient.Message
	if err := c.Do(early, &mcpclient.Handler{Message: func(m mcpclient.Message) bool { got = append(got, m); return false }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(string(got[0].Data), "hi there") {
		t.Fatalf("the early request was answered %q", datas(got))
	}
}
