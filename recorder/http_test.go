package recorder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// upstreamServer runs a test server of kind over HTTP on loopback.
func upstreamServer(t *testing.T, kind string, opts testpeer.HTTPServerOptions) *httptest.Server {
	t.Helper()
	h, err := testpeer.HTTPHandler(kind, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// startTap runs the HTTP tap in front of upstream and returns its base URL
// and its recorder.
func startTap(t *testing.T, upstream string) (string, *Recorder) {
	t.Helper()
	return startTapWith(t, upstream, nil)
}

// startTapWith is startTap with options.
func startTapWith(t *testing.T, upstream string, opts *HTTPOptions) (string, *Recorder) {
	t.Helper()
	return startTapRecording(t, upstream, opts, nil)
}

// startTapRecording is startTapWith with the recorder's options.
func startTapRecording(t *testing.T, upstream string, opts *HTTPOptions, recOpts *Options) (string, *Recorder) {
	t.Helper()
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), recOpts)
	if err != nil {
		t.Fatal(err)
	}
	tap, err := NewHTTP(upstream, rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(tap)
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
		rec.Close()
	})
	return s.URL, rec
}

type httpClient func(ctx context.Context, url string, opts testpeer.HTTPOptions) (testpeer.Transcript, error)

// TestHTTPTapRealPeers runs real clients against real servers directly and
// through the tap, and checks that they see the same, and what the cassette
// holds.
func TestHTTPTapRealPeers(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		server   testpeer.HTTPServerOptions
		client   httpClient
		protocol string
		sse      bool
		form     string // the form of a tools/call answer
	}{
		{"gosdk-sse-responses/gosdk-client/2025-11-25", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunGoSDKHTTP, "2025-11-25", false, "sse"},
		{"gosdk-json/mcpgo-client/2025-11-25", testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true}, testpeer.RunMCPGoHTTP, "2025-11-25", false, "json"},
		{"gosdk-stateless/gosdk-client", testpeer.GoSDK, testpeer.HTTPServerOptions{Stateless: true}, testpeer.RunGoSDKHTTP, "", false, ""},
		{"gosdk-json/gosdk-client", testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true}, testpeer.RunGoSDKHTTP, "", false, "json"},
		{"mcpgo/mcpgo-client", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunMCPGoHTTP, "", false, ""},
		{"mcpgo/gosdk-client/2025-11-25", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunGoSDKHTTP, "2025-11-25", false, ""},
		{"mcpgo-stateless/gosdk-client", testpeer.MCPGo, testpeer.HTTPServerOptions{Stateless: true}, testpeer.RunGoSDKHTTP, "", false, ""},
		{"gosdk-httpsse/gosdk-sse-client", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunGoSDKHTTP, "2024-11-05", true, "none"},
		{"mcpgo-httpsse/mcpgo-sse-client", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunMCPGoHTTP, "2024-11-05", true, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := upstreamServer(t, tt.kind, tt.server)
			path := "/mcp"
			if tt.sse {
				path = "/sse"
			}
			opts := testpeer.HTTPOptions{SSE: tt.sse, ClientOptions: testpeer.ClientOptions{ProtocolVersion: tt.protocol}}
			direct, err := tt.client(testCtx(t), up.URL+path, opts)
			if err != nil {
				t.Fatalf("direct: %v", err)
			}
			tapURL, rec := startTap(t, up.URL+path)
			opts.Header = http.Header{"X-Api-Key": {"sekrit"}}
			tapped, err := tt.client(testCtx(t), tapURL+path, opts)
			if err != nil {
				t.Fatalf("through the tap: %v", err)
			}
			if diff := cmp.Diff(direct, tapped); diff != "" {
				t.Errorf("the client saw something else through the tap (-direct +tap):\n%s", diff)
			}
			c := rec.Cassette()
			checkHTTPCassette(t, c, tt.form, tt.sse, true)
		})
	}
}

// checkHTTPCassette checks the recorded tools/call interactions: each has
// its response and its HTTP description, and no secret is kept.
func checkHTTPCassette(t *testing.T, c *cassettes.Cassette, form string, sse, apiKey bool) {
	t.Helper()
	calls := 0
	for _, in := range c.Interactions {
		if in.Request == nil || in.From != cassettes.FromClient {
			continue
		}
		msg, err := jsonrpc.Parse(in.Request)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Method != "tools/call" {
			continue
		}
		calls++
		if in.Response == nil {
			t.Errorf("tools/call %s has no response", msg.Params)
		}
		if in.HTTP == nil {
			t.Errorf("tools/call %s has no http member", msg.Params)
			continue
		}
		isErr := in.Response != nil && strings.Contains(string(in.Response.Message), `"error"`)
		if !sse && !isErr && in.HTTP.Status != http.StatusOK {
			t.Errorf("tools/call %s: status %d, want 200", msg.Params, in.HTTP.Status)
		}
		if form != "" && in.HTTP.Form != form {
			t.Errorf("tools/call %s: form %q, want %q", msg.Params, in.HTTP.Form, form)
		}
		if got := in.HTTP.RequestHeaders["X-Api-Key"]; apiKey && got != cassettes.Redacted {
			t.Errorf("X-Api-Key recorded as %q, want %q", got, cassettes.Redacted)
		}
		if u := in.HTTP.URL; u == "" || (strings.Contains(strings.ToLower(u), "session") && !strings.Contains(u, "="+cassettes.Redacted)) {
			t.Errorf("tools/call %s: url %q, want the path with any session id redacted", msg.Params, u)
		}
		if sid, ok := in.HTTP.RequestHeaders["Mcp-Session-Id"]; ok && sid != cassettes.Redacted {
			t.Errorf("Mcp-Session-Id recorded as %q, want %q", sid, cassettes.Redacted)
		}
	}
	if calls < 8 {
		t.Errorf("recorded %d tools/call interactions, want 9", calls)
	}
	data, _ := json.Marshal(c)
	if strings.Contains(string(data), "sekrit") {
		t.Errorf("the cassette holds the API key")
	}
}

// TestHTTPTapStreamsEventByEvent proves that the tap forwards an SSE stream
// as it comes: the client sees the first event while the server has not yet
// sent the last one (the server waits for the test to see the first).
func TestHTTPTapStreamsEventByEvent(t *testing.T) {
	seen := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": hello\n\nretry: 500\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	t.Cleanup(up.Close)
	tapURL, rec := startTap(t, up.URL+"/mcp")

	req, _ := http.NewRequestWithContext(testCtx(t), "POST", tapURL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := jsonrpc.NewSSEReader(resp.Body, 0)
	var got []jsonrpc.Event
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if len(got) == 2 {
			// The first message event: the server is still waiting.
			close(seen)
		}
	}
	if len(got) != 3 || got[0].Comments[0] != "hello" || got[1].ID != "e1" || got[1].Retry != 500 || got[2].ID != "e2" {
		t.Fatalf("events through the tap: %+v", got)
	}
	c := rec.Cassette()
	if len(c.Interactions) != 1 {
		t.Fatalf("%d interactions, want 1", len(c.Interactions))
	}
	in := c.Interactions[0]
	want := &cassettes.HTTP{URL: "/mcp", Status: 200, Form: "sse", EventIDs: []string{"e1", "e2"},
		RequestHeaders:  map[string]string{"Content-Type": "application/json"},
		ResponseHeaders: map[string]string{"Content-Type": "text/event-stream"}}
	if diff := cmp.Diff(want, in.HTTP); diff != "" {
		t.Errorf("http member (-want +got):\n%s", diff)
	}
	if len(in.Exchange) != 1 || in.Response == nil {
		t.Errorf("exchange %d messages, response %v; want the progress and the response", len(in.Exchange), in.Response)
	}
}

// TestHTTPTapUpstreamDown: an upstream that does not answer gets a 502 with
// a JSON-RPC error for the request, and the tap stays up.
func TestHTTPTapUpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	upURL := up.URL
	up.Close()
	tapURL, _ := startTap(t, upURL+"/mcp")
	for range 2 {
		resp, err := http.Post(tapURL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d, want 502", resp.StatusCode)
		}
		msg, err := jsonrpc.Parse(body)
		if err != nil || msg.ID != "7" || msg.Error == nil {
			t.Fatalf("body %s: want a JSON-RPC error for id 7", body)
		}
	}
}

// TestHTTPTapPassesStatusesAndWellKnown: 4xx answers and their bodies pass
// unchanged and are recorded; /.well-known/* is passed through unrecorded.
func TestHTTPTapPassesStatusesAndWellKnown(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/.well-known/oauth-protected-resource":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"resource":"x"}`)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="/.well-known/oauth-protected-resource"`)
			http.Error(w, "session not found", http.StatusNotFound)
		}
	}))
	t.Cleanup(up.Close)
	tapURL, rec := startTap(t, up.URL+"/mcp")
	resp, err := http.Get(tapURL + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"resource":"x"}` {
		t.Errorf("well-known body %q", body)
	}
	req, _ := http.NewRequest("POST", tapURL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Mcp-Session-Id", "abc")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || string(body) != "session not found\n" || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("got %d %q %v", resp.StatusCode, body, resp.Header)
	}
	req, _ = http.NewRequest("DELETE", tapURL+"/mcp", nil)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("DELETE: %v %v", resp.StatusCode, err)
	}
	c := rec.Cassette()
	if len(c.Interactions) != 1 {
		t.Fatalf("%d interactions, want 1 (the ping)", len(c.Interactions))
	}
	h := c.Interactions[0].HTTP
	if h == nil || h.Status != 404 || h.Body != "session not found\n" || h.RequestHeaders["Mcp-Session-Id"] != cassettes.Redacted {
		t.Errorf("http member %+v", h)
	}
	if p := rec.pendingIDs(); len(p) != 0 {
		t.Errorf("the refused ping is still pending: %v", p)
	}
}

// TestHTTPNotes checks how the builder uses HTTP notes: server messages go
// to the request whose stream carried them (not the latest in flight), the
// GET stream's messages stand alone, and a listen stream's change
// notifications are marked.
func TestHTTPNotes(t *testing.T) {
	rec, err := New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	now := time.Now()
	c, s := cassettes.FromClient, cassettes.FromServer
	rec.ObserveHTTP(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`), now, HTTPNote{Exchange: 1})
	rec.ObserveHTTP(c, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`), now, HTTPNote{Exchange: 2})
	rec.ObserveHTTPResponse(HTTPNote{Exchange: 1, Status: 200, Form: "sse"}, now)
	rec.ObserveHTTP(s, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"for a"}}`), now, HTTPNote{Exchange: 1, EventID: "a1", HasEventID: true})
	rec.ObserveHTTP(s, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"nobody's"}}`), now, HTTPNote{Exchange: 3, Stream: "get", EventID: "g1", HasEventID: true})
	rec.ObserveHTTP(s, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), now, HTTPNote{Exchange: 1, EventID: "a2", HasEventID: true})
	rec.ObserveHTTP(c, []byte(`{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{}}`), now, HTTPNote{Exchange: 4})
	rec.ObserveHTTP(s, []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), now, HTTPNote{Exchange: 4})
	got := rec.Cassette()
	if n := len(got.Interactions); n != 5 {
		t.Fatalf("%d interactions, want 5: a, b, the GET stream's message, listen, list_changed", n)
	}
	a := got.Interactions[0]
	if len(a.Exchange) != 1 || a.Response == nil || a.HTTP == nil || a.HTTP.Form != "sse" || !cmp.Equal(a.HTTP.EventIDs, []string{"a1", "a2"}) {
		t.Errorf("a: %+v %+v", a, a.HTTP)
	}
	if b := got.Interactions[1]; len(b.Exchange) != 0 {
		t.Errorf("b got a's message: %+v", b.Exchange)
	}
	if g := got.Interactions[2]; g.Notification == nil || g.HTTP == nil || g.HTTP.Stream != "get" {
		t.Errorf("GET stream message: %+v", g)
	}
	if l := got.Interactions[4]; l.Notification == nil || l.HTTP == nil || l.HTTP.Stream != "listen" {
		t.Errorf("listen stream message: %+v", l)
	}
}

// TestRecordedURL: the path and query as they came, the values of
// secret-looking parameters redacted.
func TestRecordedURL(t *testing.T) {
	for in, want := range map[string]string{
		"/mcp":                            "/mcp",
		"/mcp?":                           "/mcp?",
		"/mcp?x=1&api_key=SECRET":         "/mcp?x=1&api_key=[REDACTED]",
		"/mcp?Token=a&token=b&x=&y":       "/mcp?Token=[REDACTED]&token=[REDACTED]&x=&y",
		"/message?sessionId=abc123":       "/message?sessionId=[REDACTED]",
		"/message?sessionid=abc123&z=%41": "/message?sessionid=[REDACTED]&z=%41",
		"/a%2Fb?access_token=t&sig=s&b=2&password=p": "/a%2Fb?access_token=[REDACTED]&sig=[REDACTED]&b=2&password=[REDACTED]",
		"/mcp?api%5Fkey=SECRET&key":                  "/mcp?api%5Fkey=[REDACTED]&key",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := recordedURL(u); got != want {
			t.Errorf("recordedURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHTTPTapRecordsURL: a real client that connects with a query has the
// path and query of each exchange recorded, its secret redacted, and
// recording the same session again gives the same file byte for byte.
func TestHTTPTapRecordsURL(t *testing.T) {
	record := func(name string) []byte {
		up := upstreamServer(t, testpeer.GoSDK, testpeer.HTTPServerOptions{})
		path := filepath.Join(t.TempDir(), name)
		rec, err := New(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		tap, err := NewHTTP(up.URL+"/mcp", rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(tap)
		defer s.Close()
		if _, err := testpeer.RunGoSDKHTTP(testCtx(t), s.URL+"/mcp?x=1&api_key=SECRET", testpeer.HTTPOptions{}); err != nil {
			t.Fatal(err)
		}
		s.CloseClientConnections()
		c := rec.Cassette()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		clients := 0
		for _, in := range c.Interactions {
			if in.From != cassettes.FromClient || in.Raw != nil {
				continue
			}
			clients++
			if in.HTTP == nil || in.HTTP.URL != "/mcp?x=1&api_key=[REDACTED]" {
				t.Errorf("interaction %s: http %+v, want url /mcp?x=1&api_key=[REDACTED]", in.Request, in.HTTP)
			}
		}
		if clients < 5 {
			t.Errorf("%d client interactions recorded", clients)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"url": "/mcp?x=1&api_key=[REDACTED]"`) {
			t.Errorf("the file has no url member:\n%.2000s", data)
		}
		if strings.Contains(string(data), "SECRET") {
			t.Errorf("the cassette holds the secret of the query")
		}
		return data
	}
	first, second := record("a.json"), record("b.json")
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("recording the session again changed the file (-first +second):\n%s", diff)
	}
}

// TestHTTPTapBodyLimit: NewHTTP from Go bounds request bodies by default
// (64 MiB) or by MaxBodyBytes: a longer one gets 413 with a JSON-RPC
// error, reaches neither the upstream nor the cassette, and the tap goes
// on.
func TestHTTPTapBodyLimit(t *testing.T) {
	var upstreamBodies atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamBodies.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	check413 := func(resp *http.Response, limit int64) {
		t.Helper()
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d %s, want 413", resp.StatusCode, body)
		}
		msg, err := jsonrpc.Parse(bytes.TrimSpace(body))
		if err != nil || msg.Error == nil || !strings.Contains(string(msg.Error.Message), fmt.Sprint(limit)) {
			t.Fatalf("body %s: want a JSON-RPC error naming the limit %d", body, limit)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	}

	t.Run("default", func(t *testing.T) {
		tapURL, rec := startTap(t, up.URL+"/mcp")
		// A body announced over the default bound is refused before it is
		// read: the request need not send it.
		conn, err := net.Dial("tcp", strings.TrimPrefix(tapURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", httpguard.DefaultMaxBodyBytes+1)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		check413(resp, httpguard.DefaultMaxBodyBytes)
		if len(rec.Cassette().Interactions) != 0 {
			t.Errorf("the refused body was recorded")
		}
	})

	t.Run("option", func(t *testing.T) {
		rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rec.Close() })
		tap, err := NewHTTP(up.URL+"/mcp", rec, &HTTPOptions{MaxBodyBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(tap)
		t.Cleanup(s.Close)
		before := upstreamBodies.Load()
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`
		// Without a Content-Length (chunked): the bound is found reading.
		resp, err := http.Post(s.URL+"/mcp", "application/json", io.MultiReader(strings.NewReader(big)))
		if err != nil {
			t.Fatal(err)
		}
		check413(resp, 100)
		resp, err = http.Post(s.URL+"/mcp", "application/json", strings.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		check413(resp, 100)
		if n := upstreamBodies.Load() - before; n != 0 {
			t.Errorf("%d refused bodies reached the upstream", n)
		}
		// Within the bound, the tap goes on.
		resp, err = http.Post(s.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
			t.Fatalf("after the refusals: %d %s", resp.StatusCode, body)
		}
		c := rec.Cassette()
		if len(c.Interactions) != 1 || strings.Contains(string(c.Interactions[0].Request), "xxx") {
			t.Errorf("cassette %+v: want the ping within the bound only", c.Interactions)
		}
	})
}

// TestHTTPTapUpstreamBreaksOff: an upstream that dies in the middle of its
// answer (a crash, a restart) gets the client a 502 with a JSON-RPC error
// for its request, not half a body, if the answer is JSON; an event stream
// that is cut ends for the client after the events that came. The tap
// stays up.
func TestHTTPTapUpstreamBreaksOff(t *testing.T) {
	var mode atomic.Value
	mode.Store("json")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		m := mode.Load().(string)
		if m == "ok" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{}}`)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		if m == "json" {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res")
		} else {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			ev := "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
			fmt.Fprintf(buf, "%x\r\n%s\r\n", len(ev), ev)
		}
		buf.Flush()
	}))
	t.Cleanup(up.Close)
	tapURL, rec := startTap(t, up.URL+"/mcp")
	post := func(id string) (int, string, []byte) {
		req, _ := http.NewRequest(http.MethodPost, tapURL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	status, ct, body := post("1")
	msg, err := jsonrpc.Parse(bytes.TrimSpace(body))
	if status != http.StatusBadGateway || ct != "application/json" || err != nil || msg.Error == nil || msg.ID != "1" {
		t.Fatalf("a JSON answer broken off: %d %s %q, want 502 and a JSON-RPC error for id 1", status, ct, body)
	}
	mode.Store("sse")
	status, ct, body = post("2")
	if status != http.StatusOK || ct != "text/event-stream" || !strings.Contains(string(body), "notifications/progress") {
		t.Fatalf("an event stream cut: %d %s %q, want the event that came", status, ct, body)
	}
	mode.Store("ok")
	if status, _, body = post("3"); status != http.StatusOK || !strings.Contains(string(body), `"result"`) {
		t.Fatalf("after the faults: %d %s", status, body)
	}
	rec.Sync()
	c := rec.Cassette()
	if len(c.Interactions) != 3 {
		t.Errorf("%d interactions, want the three calls", len(c.Interactions))
	}
}

// TestHTTPTapSavesBigBatchFirst: over HTTP as on stdio, the answers to a
// large batch reach the client once a save holds them (saveFirst): when
// the client has read them, the file does, though the recorder saves
// only every hour otherwise.
func TestHTTPTapSavesBigBatchFirst(t *testing.T) {
	const n = 20_000
	req, resp := pingBatch(n)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	}))
	t.Cleanup(up.Close)
	tapURL, rec := startTapRecording(t, up.URL+"/mcp", nil, &Options{FlushInterval: time.Hour})
	post, _ := http.NewRequest("POST", tapURL+"/mcp", bytes.NewReader(req))
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Accept", "application/json, text/event-stream")
	got, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || !bytes.Equal(body, resp) {
		t.Fatalf("the client got %d bytes (%v), want the %d of the answers", len(body), err, len(resp))
	}
	if answered := answeredInFile(t, rec.path); answered != n {
		t.Fatalf("once the client had the answers, the file held %d answered calls, want %d", answered, n)
	}
}
