package replayer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
)

const initialize = `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},` +
	`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}}}`

func serveHTTP(t *testing.T, text string, opts *HTTPOptions) (*httptest.Server, *HTTPHandler) {
	t.Helper()
	c, err := cassettes.Parse("test.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv, h
}

// exchange is one HTTP request and what came back.
type exchange struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url, body string, header map[string]string) exchange {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return exchange{resp.StatusCode, resp.Header, string(b)}
}

// events parses an SSE body into the data of its events.
func events(body string) []string {
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

func rpcError(t *testing.T, body string) int {
	t.Helper()
	var m struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("want a JSON-RPC error body, got %q", body)
	}
	return m.Error.Code
}

func TestStreamableSessions(t *testing.T) {
	srv, h := serveHTTP(t, cassette(initialize, call(1, "get_weather", `{"location":"NYC"}`, text("sunny"))), nil)
	u := srv.URL + "/mcp"
	callBody := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"NYC"}}}`

	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" || !strings.HasPrefix(init.header.Get("Content-Type"), "application/json") {
		t.Fatalf("initialize: %d %v %q", init.status, init.header, init.body)
	}
	other := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	if other == "" || other == sid {
		t.Errorf("a second initialize got session id %q, want a fresh one (first %q)", other, sid)
	}

	withSession := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	tests := []struct {
		name, method, body string
		header             map[string]string
		status             int
		contains           string
		code               int
	}{
		{name: "call", method: "POST", body: callBody, header: withSession, status: 200, contains: `"id":7`},
		{name: "notification", method: "POST", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: withSession, status: 202},
		{name: "client response", method: "POST", body: `{"jsonrpc":"2.0","id":99,"result":{}}`, header: withSession, status: 202},
		{name: "no session", method: "POST", body: callBody, status: 400, contains: "Mcp-Session-Id"},
		{name: "unknown session", method: "POST", body: callBody, header: map[string]string{"Mcp-Session-Id": "nope"}, status: 404},
		{name: "bad protocol version", method: "POST", body: callBody, header: map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "1999-01-01"}, status: 400, contains: "Unsupported protocol version"},
		{name: "accept json only", method: "POST", body: callBody, header: map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}, status: 406},
		{name: "no accept", method: "POST", body: callBody, header: map[string]string{"Mcp-Session-Id": sid, "Accept": ""}, status: 406},
		{name: "content type", method: "POST", body: callBody, header: map[string]string{"Mcp-Session-Id": sid, "Content-Type": "text/plain"}, status: 415},
		{name: "not json", method: "POST", body: `{"jsonrpc":`, header: withSession, status: 400, code: -32700},
		{name: "invalid request", method: "POST", body: `{"jsonrpc":"1.0","id":3,"method":"x"}`, header: withSession, status: 400, code: -32600},
		{name: "put", method: "PUT", body: "", status: 405},
		{name: "get without session", method: "GET", header: map[string]string{"Accept": "text/event-stream"}, status: 400},
		{name: "get without accept", method: "GET", header: map[string]string{"Mcp-Session-Id": sid}, status: 406},
		// Any path is Streamable HTTP (the handler can be mounted anywhere):
		// the session is asked for, as at /mcp.
		{name: "other path", method: "POST", body: callBody, status: 400, contains: "Mcp-Session-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := u
			if tt.name == "other path" {
				url = srv.URL + "/other"
			}
			got := do(t, tt.method, url, tt.body, tt.header)
			if got.status != tt.status {
				t.Errorf("status %d, want %d (%q)", got.status, tt.status, got.body)
			}
			if !strings.Contains(got.body, tt.contains) {
				t.Errorf("body %q does not contain %q", got.body, tt.contains)
			}
			if tt.code != 0 {
				if c := rpcError(t, got.body); c != tt.code {
					t.Errorf("JSON-RPC code %d, want %d", c, tt.code)
				}
			}
		})
	}

	if n := h.Sessions(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
	if got := do(t, "DELETE", u, "", map[string]string{"Mcp-Session-Id": sid}); got.status != 204 {
		t.Errorf("DELETE: %d, want 204", got.status)
	}
	if got := do(t, "POST", u, callBody, withSession); got.status != 404 {
		t.Errorf("POST after DELETE: %d, want 404", got.status)
	}
	if got := do(t, "DELETE", u, "", map[string]string{"Mcp-Session-Id": sid}); got.status != 404 {
		t.Errorf("second DELETE: %d, want 404", got.status)
	}
}

func progressCall() string {
	return `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p1"}}},` +
		`"exchange":[{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}},` +
		`{"from":"server","atMs":2,"message":{"jsonrpc":"2.0","id":0,"method":"roots/list"}},` +
		`{"from":"client","atMs":3,"message":{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}}],` +
		`"response":{"from":"server","atMs":4,"message":{"jsonrpc":"2.0","id":2,"result":` + text("done") + `}}}`
}

// TestStreamableForms checks the answer forms: JSON for a lone response, an
// event stream when the answer carries progress and a server-to-client
// request (whose reply the client POSTs), the recorded form when there is
// one, and the GET stream for what belongs to no request.
func TestStreamableForms(t *testing.T) {
	listChanged := `{"from":"server","atMs":5,"notification":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}`
	sseRecorded := strings.Replace(call(3, "echo", `{}`, text("hi")), `"response"`, `"http":{"status":200,"form":"sse","eventIds":["e1"]},"response"`, 1)
	srv, _ := serveHTTP(t, cassette(initialize, progressCall(), listChanged, sseRecorded), nil)
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid}

	// The GET stream, read event by event.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	getResp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer getResp.Body.Close()
	if getResp.StatusCode != 200 || getResp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET stream: %d %v", getResp.StatusCode, getResp.Header)
	}
	if again := do(t, "GET", u, "", map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}); again.status != 409 {
		t.Errorf("second GET stream: %d, want 409", again.status)
	}

	// The progress call: an event stream that pauses for the roots/list reply.
	req, _ = http.NewRequestWithContext(t.Context(), "POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"live"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("progress call answered %q, want text/event-stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() string {
		t.Helper()
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return d
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
	if ev := next(); !strings.Contains(ev, `"progressToken":"live"`) {
		t.Errorf("first event %s, want progress with the live token", ev)
	}
	ev := next()
	var sreq struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal([]byte(ev), &sreq)
	if sreq.Method != "roots/list" {
		t.Fatalf("second event %s, want roots/list", ev)
	}
	if got := do(t, "POST", u, `{"jsonrpc":"2.0","id":`+string(sreq.ID)+`,"result":{"roots":[]}}`, hdr); got.status != 202 {
		t.Errorf("reply POST: %d, want 202", got.status)
	}
	if ev := next(); !strings.Contains(ev, `"id":"a"`) || !strings.Contains(ev, "done") {
		t.Errorf("third event %s, want the response", ev)
	}
	if sc.Scan() && strings.HasPrefix(sc.Text(), "data:") {
		t.Errorf("the stream goes on after the response: %q", sc.Text())
	}

	// list_changed, recorded after the call and belonging to no request,
	// arrives on the GET stream.
	gsc := bufio.NewScanner(getResp.Body)
	for gsc.Scan() {
		if d, ok := strings.CutPrefix(gsc.Text(), "data: "); ok {
			if !strings.Contains(d, "notifications/tools/list_changed") {
				t.Errorf("GET stream carried %s, want list_changed", d)
			}
			break
		}
	}

	// The recorded form (sse) and event id win for a lone response.
	got := do(t, "POST", u, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, hdr)
	if got.header.Get("Content-Type") != "text/event-stream" || !strings.Contains(got.body, "id: e1\n") || len(events(got.body)) != 1 {
		t.Errorf("recorded sse form: %v %q", got.header, got.body)
	}
}

func TestStreamableFormOption(t *testing.T) {
	sseRecorded := strings.Replace(call(3, "echo", `{}`, text("hi")), `"response"`, `"http":{"form":"sse"},"response"`, 1)
	for _, tc := range []struct{ form, want string }{{"json", "application/json"}, {"sse", "text/event-stream"}, {"", "text/event-stream"}} {
		srv, _ := serveHTTP(t, cassette(initialize, sseRecorded), &HTTPOptions{Form: tc.form})
		u := srv.URL + "/mcp"
		sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
		got := do(t, "POST", u, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, map[string]string{"Mcp-Session-Id": sid})
		if ct := got.header.Get("Content-Type"); ct != tc.want {
			t.Errorf("Form %q: Content-Type %q, want %q", tc.form, ct, tc.want)
		}
	}
}

func TestStatelessHeaders(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	srv, h := serveHTTP(t, cassette(call(1, "get_weather", `{"location":"NYC"}`, text("sunny"))), nil)
	u := srv.URL + "/mcp"
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"NYC"},` + meta + `}}`
	good := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   int
	}{
		{"good", body, good, 200, 0},
		{"base64 name", body, with("Mcp-Name", "=?base64?Z2V0X3dlYXRoZXI=?="), 200, 0},
		{"session id ignored", body, with("Mcp-Session-Id", "whatever"), 200, 0},
		{"no method header", body, with("Mcp-Method", ""), 400, CodeHeaderMismatch},
		{"method mismatch", body, with("Mcp-Method", "tools/list"), 400, CodeHeaderMismatch},
		{"no name header", body, with("Mcp-Name", ""), 400, CodeHeaderMismatch},
		{"name mismatch", body, with("Mcp-Name", "other"), 400, CodeHeaderMismatch},
		{"version mismatch", strings.Replace(body, "2026-07-28", "2025-11-25", 1), good, 400, CodeHeaderMismatch},
		{"no version header", body, with("Mcp-Protocol-Version", ""), 400, CodeHeaderMismatch},
		{"unknown version", strings.Replace(body, "2026-07-28", "2099-01-01", 1), with("Mcp-Protocol-Version", "2099-01-01"), 400, CodeUnsupportedProtocolVersion},
		{"no meta", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{}}}`, good, 400, -32602},
		{"method never recorded", `{"jsonrpc":"2.0","id":6,"method":"prompts/list","params":{` + meta + `}}`, with("Mcp-Method", "prompts/list"), 404, -32601},
		{"batch", "[" + body + "]", good, 400, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, "POST", u, tt.body, tt.header)
			if got.status != tt.status {
				t.Errorf("status %d, want %d (%q)", got.status, tt.status, got.body)
			}
			if tt.code != 0 {
				if c := rpcError(t, got.body); c != tt.code {
					t.Errorf("code %d, want %d (%s)", c, tt.code, got.body)
				}
			}
			if got.header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a stateless answer minted a session id")
			}
		})
	}
	if n := h.Sessions(); n != 0 {
		t.Errorf("stateless traffic made %d sessions", n)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if got := do(t, m, u, "", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Accept": "text/event-stream"}); got.status != 405 {
			t.Errorf("%s in 2026-07-28: %d, want 405", m, got.status)
		}
	}
}

func TestStatelessSharedState(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	srv, _ := serveHTTP(t, cassette(call(1, "echo", `{}`, text("first")), call(2, "echo", `{}`, text("second"))),
		&HTTPOptions{StatelessKey: func(r *http.Request) string { return r.Header.Get("X-Test") }})
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{},` + meta + `}}`
	hdr := func(key string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo", "X-Test": key}
	}
	for _, step := range []struct{ key, want string }{{"a", "first"}, {"a", "second"}, {"b", "first"}, {"a", "second"}} {
		if got := do(t, "POST", srv.URL+"/mcp", body, hdr(step.key)); !strings.Contains(got.body, step.want) {
			t.Errorf("key %s: %s, want %s", step.key, got.body, step.want)
		}
	}
}

// TestConcurrentSessions runs 20 go-sdk clients at once: each session has
// its own repeat state, so each sees the first answer and then the second.
func TestConcurrentSessions(t *testing.T) {
	srv, h := serveHTTP(t, cassette(initialize, call(1, "echo", `{}`, text("first")), call(2, "echo", `{}`, text("second"))), nil)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sessions := make(chan *mcp.ClientSession, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("client", i), Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				errs <- err
				return
			}
			sessions <- cs
			for _, want := range []string{"first", "second", "second"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
				if err != nil {
					errs <- err
					return
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != want {
					errs <- fmt.Errorf("client %d: got %q, want %q", i, got, want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(sessions)
	for err := range errs {
		t.Error(err)
	}
	if got := h.Sessions(); got != n {
		t.Errorf("%d sessions open, want %d", got, n)
	}
	for cs := range sessions {
		cs.Close()
	}
	if got := h.Sessions(); got != 0 {
		t.Errorf("%d sessions left after every client closed (DELETE), want 0", got)
	}
}

func TestBatch20250326(t *testing.T) {
	srv, _ := serveHTTP(t, cassette(initialize, call(1, "echo", `{}`, text("hi")), call(2, "add", `{}`, text("3"))), nil)
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	batch := `[{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{}}},` +
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}},` +
		`{"jsonrpc":"2.0","id":"y","method":"tools/call","params":{"name":"add","arguments":{}}}]`
	got := do(t, "POST", u, batch, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-03-26"})
	var out []map[string]any
	if err := json.Unmarshal([]byte(got.body), &out); err != nil || len(out) != 2 || out[0]["id"] != "x" || out[1]["id"] != "y" {
		t.Errorf("batch answer %d %q, want an array of the two responses", got.status, got.body)
	}
	if got := do(t, "POST", u, batch, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}); got.status != 400 {
		t.Errorf("batch in 2025-06-18: %d, want 400", got.status)
	}
}

func TestSSETransport(t *testing.T) {
	srv, h := serveHTTP(t, cassette(initialize, call(1, "echo", `{}`, text("hi"))), nil)
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var event, data string
	for sc.Scan() && data == "" {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = e
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = d
		}
	}
	if event != "endpoint" || !strings.HasPrefix(data, "message?sessionId=") {
		t.Fatalf("first event %q %q, want endpoint message?sessionId=...", event, data)
	}
	endpoint := srv.URL + "/" + data
	if got := do(t, "POST", endpoint, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, nil); got.status != 202 {
		t.Errorf("POST to the endpoint: %d, want 202", got.status)
	}
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if !strings.Contains(d, `"id":9`) || !strings.Contains(d, "hi") {
				t.Errorf("stream carried %s, want the response", d)
			}
			break
		}
	}
	if got := do(t, "POST", srv.URL+"/message?sessionId=nope", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, nil); got.status != 404 {
		t.Errorf("unknown session: %d, want 404", got.status)
	}
	if got := do(t, "POST", endpoint, `not json`, nil); got.status != 400 {
		t.Errorf("not JSON: %d, want 400", got.status)
	}
	resp.Body.Close()
	h.Close() // ends the stream and the session
	if got := do(t, "POST", endpoint, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, nil); got.status != 404 {
		t.Errorf("after Close: %d, want 404", got.status)
	}
}
