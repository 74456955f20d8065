package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeCassette writes a cassette of the given interactions (after a
// 2025-11-25 initialize whose server declares tools.listChanged and
// logging) to a temporary file.
func writeCassette(t *testing.T, interactions ...string) string {
	t.Helper()
	init := `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},` +
		`"response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"s","version":"1"}}}}}`
	path := filepath.Join(t.TempDir(), "protocol.json")
	text := `{"version":1,"meta":{},"interactions":[` + strings.Join(append([]string{init}, interactions...), ",\n") + `]}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// stdioSession connects a go-sdk client to mcpmock's stdin and stdout.
func stdioSession(t *testing.T, p *proc, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, opts)
	cs, err := c.Connect(testContext(t), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// httpSession connects a go-sdk client to an mcpmock listening at url.
func httpSession(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, opts)
	cs, err := c.Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// logLines returns the lines of mcpmock's live log that contain every one
// of parts.
func logLines(p *proc, parts ...string) []string {
	var out []string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		all := true
		for _, s := range parts {
			all = all && strings.Contains(l, s)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// A real go-sdk client cancels a call over Streamable HTTP after its first
// progress notification: mcpmock (replay --listen --latency recorded)
// sends neither the progress recorded after it nor the response, as the
// spec allows, and answers the session's next call. The next call's
// recorded latency (1.5 s) is longer than what was left of the cancelled
// one (0.8 s), so its answer comes after the dropped messages would have.
func TestReplayCancellationOverHTTP(t *testing.T) {
	path := writeCassette(t,
		`{"from":"client","atMs":100,"request":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}},
		 "exchange":[{"from":"server","atMs":100,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":3}}},
		             {"from":"server","atMs":500,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":3}}}],
		 "response":{"from":"server","atMs":900,"message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slow done"}]}}}}`,
		`{"from":"client","atMs":1000,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{}}},
		 "response":{"from":"server","atMs":2500,"message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"fast done"}]}}}}`)
	p, url := startListening(t, "replay", "-c", path, "--listen", "127.0.0.1:0", "--latency", "recorded")
	ctx, cancel := context.WithCancel(testContext(t))
	progressed := make(chan float64, 10)
	cs := httpSession(t, url, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		progressed <- req.Params.Progress
		cancel()
	}})
	params := &mcp.CallToolParams{Name: "slow"}
	params.SetProgressToken("live-token")
	_, err := cs.CallTool(ctx, params)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	if got := <-progressed; got != 1 {
		t.Errorf("first progress %v", got)
	}
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "fast"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "fast done" {
		t.Fatalf("the next call: %v %v", res, err)
	}
	if n := len(logLines(p, "→", "notifications/cancelled")); n != 1 {
		t.Errorf("%d notifications/cancelled in the log, want 1", n)
	}
	if got := logLines(p, "←", "notifications/progress"); len(got) != 1 {
		t.Errorf("progress sent after the cancellation: %q", got)
	}
	if got := logLines(p, "←", "slow done"); len(got) != 0 {
		t.Errorf("the cancelled call was answered: %q", got)
	}

	// go-sdk drops the call's event stream as it cancels, which ends
	// the call too. A client that keeps reading it: after
	// notifications/cancelled, the stream ends with nothing more.
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequestWithContext(testContext(t), "POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	call := post(sid, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"raw"}}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	var first string
	for !strings.HasPrefix(first, "data:") {
		if first, err = events.ReadString('\n'); err != nil {
			t.Fatalf("no first event: %v", err)
		}
	}
	if !strings.Contains(first, "notifications/progress") {
		t.Fatalf("first event %q", first)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"enough"}}`).Body.Close()
	rest, _ := io.ReadAll(events)
	if strings.Contains(string(rest), "data:") {
		t.Errorf("the stream went on after notifications/cancelled: %s", rest)
	}
}

// toolsCassette records five tools in one unpaginated tools/list.
func toolsCassette(t *testing.T) string {
	return writeCassette(t, `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}},
	 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":1,"result":{"tools":[`+
		`{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}},`+
		`{"name":"d","inputSchema":{"type":"object"}},{"name":"e","inputSchema":{"type":"object"}}]}}}}`)
}

// followPages lists the tools by following nextCursor, page by page.
func followPages(t *testing.T, cs *mcp.ClientSession) (names string, pages int) {
	t.Helper()
	cursor := ""
	var all []string
	for pages = 1; pages < 20; pages++ {
		res, err := cs.ListTools(testContext(t), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, tool := range res.Tools {
			all = append(all, tool.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return strings.Join(all, ","), pages
}

// replay --page-size 2 re-pages a recording without pages: a real go-sdk
// client that follows nextCursor sees the five tools in three pages, over
// stdio and over Streamable HTTP; a cursor it never got is -32602.
func TestReplayPageSize(t *testing.T) {
	path := toolsCassette(t)
	check := func(name string, cs *mcp.ClientSession) {
		names, pages := followPages(t, cs)
		if names != "a,b,c,d,e" || pages != 3 {
			t.Errorf("%s: tools %s in %d pages, want a,b,c,d,e in 3", name, names, pages)
		}
		_, err := cs.ListTools(testContext(t), &mcp.ListToolsParams{Cursor: "bogus"})
		if err == nil || !strings.Contains(err.Error(), "cursor") {
			t.Errorf("%s: an unknown cursor: %v, want -32602", name, err)
		}
	}
	p := start(t, "replay", "-c", path, "--page-size", "2")
	cs := stdioSession(t, p, nil)
	check("stdio", cs)
	cs.Close()

	_, url := startListening(t, "replay", "-c", path, "--page-size", "2", "--listen", "127.0.0.1:0")
	check("HTTP", httpSession(t, url, nil))
}
