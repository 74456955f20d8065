package replayer

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// serveFaults serves a cassette over HTTP with an overlay made of the given
// interaction (a get_weather call with a fault).
func serveFaults(t *testing.T, when *cassettes.When, fault cassettes.Fault) string {
	t.Helper()
	c, err := cassettes.Parse("test.json", []byte(cassette(initialize, call(1, "get_weather", `{"location":"NYC"}`, text("sunny")))))
	if err != nil {
		t.Fatal(err)
	}
	in := cassettes.Interaction{From: cassettes.FromClient, Request: []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"get_weather"}}`), When: when, Fault: &fault}
	e, err := New(c, &Options{Overlays: []*cassettes.Cassette{{Version: 1, Interactions: []cassettes.Interaction{in}}}})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	return srv.URL + "/mcp"
}

// openSession initializes an HTTP session and returns its headers.
func openSession(t *testing.T, u string) map[string]string {
	t.Helper()
	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
	return map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
}

const weatherBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"NYC"}}}`

func TestHTTPStatusFault(t *testing.T) {
	u := serveFaults(t, &cassettes.When{Nth: 2}, cassettes.Fault{HTTPStatus: 429, HTTPHeaders: map[string]string{"Retry-After": "2"}, HTTPBody: "slow down"})
	h := openSession(t, u)
	if x := do(t, "POST", u, weatherBody, h); x.status != 200 || !strings.Contains(x.body, "sunny") {
		t.Errorf("first call: %d %q", x.status, x.body)
	}
	x := do(t, "POST", u, weatherBody, h)
	if x.status != 429 || x.header.Get("Retry-After") != "2" || x.body != "slow down" {
		t.Errorf("second call: %d Retry-After=%q %q, want 429 with Retry-After 2", x.status, x.header.Get("Retry-After"), x.body)
	}
	if x := do(t, "POST", u, weatherBody, h); x.status != 200 {
		t.Errorf("third call: %d", x.status)
	}
}

// TestHTTPStatusFaultRealClient: what a go-sdk client sees of a 503.
func TestHTTPStatusFaultRealClient(t *testing.T) {
	u := serveFaults(t, &cassettes.When{Nth: 1}, cassettes.Fault{HTTPStatus: 503})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: u, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"location": "NYC"}})
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("the client saw %v, want Service Unavailable", err)
	}
}

func TestHTTPDelayAndClose(t *testing.T) {
	u := serveFaults(t, nil, cassettes.Fault{DelayMs: 150})
	h := openSession(t, u)
	start := time.Now()
	if x := do(t, "POST", u, weatherBody, h); x.status != 200 || time.Since(start) < 150*time.Millisecond {
		t.Errorf("delay: %d after %v", x.status, time.Since(start))
	}

	u = serveFaults(t, nil, cassettes.Fault{Close: true})
	h = openSession(t, u)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", u, strings.NewReader(weatherBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("close: got status %d, want the connection dropped", resp.StatusCode)
	}
}

// serveProgressFault serves over HTTP a cassette of a tools/call answered
// with progress before its response (an event stream), with fault on it.
func serveProgressFault(t *testing.T, fault cassettes.Fault) string {
	t.Helper()
	c, err := cassettes.Parse("test.json", []byte(cassette(initialize, progressCall())))
	if err != nil {
		t.Fatal(err)
	}
	in := cassettes.Interaction{From: cassettes.FromClient, Request: []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"progress"}}`), Fault: &fault}
	e, err := New(c, &Options{Overlays: []*cassettes.Cassette{{Version: 1, Interactions: []cassettes.Interaction{in}}}})
	if err != nil {
		t.Fatal(err)
	}
	hd := e.Handler(nil)
	srv := httptest.NewServer(hd)
	t.Cleanup(func() { hd.Close(); srv.Close() })
	return srv.URL + "/mcp"
}

// TestHTTPCutStream: an SSE answer cut after its first event never
// delivers the response.
func TestHTTPCutStream(t *testing.T) {
	u := serveProgressFault(t, cassettes.Fault{CutAfterEvents: 1})
	h := openSession(t, u)
	x := do(t, "POST", u, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}`, h)
	ev := events(x.body)
	if len(ev) != 1 || !strings.Contains(ev[0], "notifications/progress") {
		t.Errorf("cut stream carried %q, want only the first (progress) event", ev)
	}
}

// TestHTTPStatusFaultOnAStream: a scripted status on a call whose recorded
// answer is an event stream (progress before the response) answers with
// the status alone, not with an event stream.
func TestHTTPStatusFaultOnAStream(t *testing.T) {
	u := serveProgressFault(t, cassettes.Fault{HTTPStatus: 503, HTTPBody: "down"})
	x := do(t, "POST", u, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}`, openSession(t, u))
	if x.status != 503 || x.body != "down" {
		t.Errorf("got %d %q, want 503 \"down\"", x.status, x.body)
	}
}

func TestHTTPTrickle(t *testing.T) {
	u := serveFaults(t, nil, cassettes.Fault{TrickleBytesPerSec: 600})
	h := openSession(t, u)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", u, strings.NewReader(weatherBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	reads := 0
	var body []byte
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			reads++
			body = append(body, buf[:n]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if reads < 3 || !strings.Contains(string(body), "sunny") {
		t.Errorf("trickled body came in %d reads: %q", reads, body)
	}
}
