package replayer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resumableCall is a tools/call recorded from a resumable server: its answer
// was an event stream whose events had ids (a progress notification, a
// roots/list request the client answered, then the response).
func resumableCall() string {
	return strings.Replace(progressCall(), `"response"`, `"http":{"status":200,"form":"sse","eventIds":["s1","s2","s3"]},"response"`, 1)
}

// readEvent reads the next event that carries data (sseEvent is in
// http_resume_reliability_test.go).
func readEvent(sc *bufio.Scanner) (sseEvent, bool) {
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			ev.id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		case line == "" && ev.data != "":
			return ev, true
		}
	}
	return ev, false
}

// openPOST POSTs body in session sid and returns the response, whose body
// the caller reads as it comes.
func openPOST(t *testing.T, ctx context.Context, u, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestConformanceResumePOSTStream: a client that loses the event stream of
// its POST (here: it closes the connection after the roots/list request,
// before the response) answers the request, then resumes with GET and
// Last-Event-ID, and gets the rest of that stream (the response). Before, the disconnection cancelled the request and a
// Last-Event-ID of a POST stream opened the standalone GET stream, where
// the response never came.
func TestConformanceResumePOSTStream(t *testing.T) {
	srv, _ := serveHTTP(t, cassette(initialize, resumableCall()), nil)
	u := srv.URL + "/mcp"
	sid := do(t, "POST", u, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil).header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	postCtx, drop := context.WithCancel(ctx)
	resp := openPOST(t, postCtx, u, sid, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"t"}}}`)
	sc := bufio.NewScanner(resp.Body)
	progress, _ := readEvent(sc)
	roots, ok := readEvent(sc)
	if !ok || progress.id != "s1" || roots.id != "s2" || !strings.Contains(roots.data, "roots/list") {
		t.Fatalf("first events %+v %+v, want progress (s1) and roots/list (s2)", progress, roots)
	}
	drop() // the connection is lost before the response
	resp.Body.Close()

	// The client answers the server's request, then resumes.
	var rootsReq struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(roots.data), &rootsReq); err != nil {
		t.Fatal(err)
	}
	if got := do(t, "POST", u, `{"jsonrpc":"2.0","id":`+string(rootsReq.ID)+`,"result":{"roots":[]}}`, hdr); got.status != http.StatusAccepted {
		t.Fatalf("reply POST: %d %s", got.status, got.body)
	}
	get, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Last-Event-ID", roots.id)
	gresp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer gresp.Body.Close()
	// The GET carries the rest of the resumed stream, then stays open
	// (http_resume_open_test.go).
	ev, ok := readEvent(bufio.NewScanner(gresp.Body))
	if gresp.StatusCode != 200 || !ok || ev.id != "s3" || !strings.Contains(ev.data, `"id":"a"`) || !strings.Contains(ev.data, "done") {
		t.Fatalf("resumed stream: %d %+v, want the response (id s3)", gresp.StatusCode, ev)
	}

	// The same recorded answer again in this session: its events get ids
	// not yet used in the session, and Last-Event-ID of one of them resumes
	// that stream, not the first one.
	resp = openPOST(t, ctx, u, sid, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"u"}}}`)
	defer resp.Body.Close()
	first, _ := readEvent(bufio.NewScanner(resp.Body))
	if first.id == "" || first.id == "s1" || !strings.Contains(first.data, "progress") {
		t.Fatalf("repeated stream's first event %+v, want progress with an id not yet used in the session", first)
	}
	_, next := getStream(t, ctx, u, sid, first.id)
	if ev := next(); !strings.Contains(ev.data, "roots/list") || ev.id == "s2" || ev.id == "" {
		t.Errorf("resuming the second stream after %s: %+v, want its roots/list with a fresh id", first.id, ev)
	}
}

// cutTransport ends the body of the first event stream answering a
// tools/call after its first event, as a dropped connection would.
type cutTransport struct{ cut bool }

func (c *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var isCall bool
	if req.Method == http.MethodPost && req.GetBody != nil {
		b, _ := req.GetBody()
		body, _ := io.ReadAll(b)
		isCall = bytes.Contains(body, []byte(`"tools/call"`))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !isCall || c.cut || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	c.cut = true
	resp.Body = &firstEvent{r: bufio.NewReader(resp.Body), c: resp.Body}
	return resp, nil
}

// firstEvent reads one SSE event, then reports the end of the body.
type firstEvent struct {
	r    *bufio.Reader
	c    io.Closer
	done bool
}

func (f *firstEvent) Read(p []byte) (int, error) {
	if f.done {
		return 0, io.EOF
	}
	line, err := f.r.ReadString('\n')
	if line == "\n" {
		f.done = true
	}
	return copy(p, line), err
}

func (f *firstEvent) Close() error { return f.c.Close() }

// TestConformanceResumePOSTStreamGoSDK: the go-sdk client, whose tools/call
// stream drops after its first event (which has an id), resumes it with
// GET and Last-Event-ID and gets its result. Before, the replay answered
// that GET with the standalone stream and the call never returned.
func TestConformanceResumePOSTStreamGoSDK(t *testing.T) {
	call := `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}},` +
		`"exchange":[{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}}],` +
		`"http":{"status":200,"form":"sse","eventIds":["x_0","x_1"]},` +
		`"response":{"from":"server","atMs":2,"message":{"jsonrpc":"2.0","id":2,"result":` + text("slow done") + `}}}`
	srv, _ := serveHTTP(t, cassette(initialize, call), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cut := &cutTransport{}
	client := mcp.NewClient(&mcp.Implementation{Name: "resumer", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: cut}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool after a dropped stream: %v", err)
	}
	if !cut.cut {
		t.Fatal("the stream was not cut: the test proves nothing")
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "slow done" {
		t.Fatalf("result %+v, want slow done", res.Content)
	}
}
