package main

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/httpguard"
)

// TestReplayRoutes: replay --listen serves exactly the URLs of DESIGN.md
// ("Command line") and README: Streamable HTTP at /mcp, HTTP+SSE at /sse
// with its endpoint at /message, the control endpoint at /_mcpmock/notify,
// and 404 elsewhere, a prefixed path included.
func TestReplayRoutes(t *testing.T) {
	guard := &httpguard.Options{}
	_, h := replayBehindGuard(t, guard)
	srv := httptest.NewServer(httpguard.Wrap(replayRoutes(h), guard))
	t.Cleanup(srv.Close)
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		return resp.StatusCode, b.String()
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/mcp", string(initializeBody(0)), 200, `"result"`},
		{"/_mcpmock/notify?method=notifications/tools/list_changed", "", 200, `"sessions":`},
		{"/message", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 400, "sessionId is required"},
		{"/other", "", 404, "mcpmock serves Streamable HTTP at /mcp and HTTP+SSE at /sse, not /other"},
		{"/api/mcp", string(initializeBody(0)), 404, "not /api/mcp"},
	} {
		if status, body := post(tc.path, tc.body); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("POST %s: %d %.200s, want %d with %q", tc.path, status, body, tc.status, tc.want)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	event, _ := br.ReadString('\n')
	data, _ := br.ReadString('\n')
	if event != "event: endpoint\n" || !strings.HasPrefix(data, "data: message?sessionId=") {
		t.Errorf("GET /sse: first event %q %q, want the endpoint message?sessionId=...", event, data)
	}
}
