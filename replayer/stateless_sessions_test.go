package replayer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
)

// sessionlessServer is a real go-sdk server run without sessions
// (StreamableHTTPOptions.Stateless, a server of the stateful era): count
// answers from state the server keeps across requests, log logs at
// debug, info and error, progress sends three progress notifications.
func sessionlessServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sessionless", Version: "1"}, nil)
	type noIn struct{}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	var mu sync.Mutex
	n := 0
	mcp.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return text(fmt.Sprint("n=", n)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		for _, level := range []mcp.LoggingLevel{"debug", "info", "error"} {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Data: "at " + string(level)})
		}
		return text("logged"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3})
		}
		return text("progressed"), nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv
}

// httpLog is an http.RoundTripper that notes each exchange's method,
// status and Mcp-Session-Id headers.
type httpLog struct {
	mu    sync.Mutex // guards lines and changed
	lines []string
	// changed is closed when a line is added; nil when nobody waits.
	changed chan struct{}
}

func (l *httpLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	line := fmt.Sprintf("%s %s", req.Method, req.Header.Get("Mcp-Session-Id"))
	if err == nil {
		line += fmt.Sprintf(" -> %d %s session %q", resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Mcp-Session-Id"))
	}
	l.mu.Lock()
	l.lines = append(l.lines, line)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	l.mu.Unlock()
	return resp, err
}

// answered waits until a request of the given method has had an answer.
func (l *httpLog) answered(ctx context.Context, method string) error {
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.HasPrefix(line, method+" ") && strings.Contains(line, " -> ") {
				l.mu.Unlock()
				return nil
			}
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("no %s was answered: %w", method, ctx.Err())
		}
	}
}

// sorted returns the distinct exchanges seen, sorted: the clients' GET
// goes alongside the POSTs, and how often a POST happens is the script's.
func (l *httpLog) sorted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.lines)
	slices.Sort(out)
	return slices.Compact(out)
}

// sessionlessGoSDK runs the script with a go-sdk client against url and
// returns what it saw: results, logs, progress, and the HTTP exchanges.
func sessionlessGoSDK(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var seen []string
	note := func(format string, args ...any) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	hl := &httpLog{}
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-client", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			note("log %s %v", req.Params.Level, req.Params.Data)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			note("progress %v/%v", req.Params.Progress, req.Params.Total)
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: hl}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	note("session id %q", cs.ID())
	// The server keeps no level: each request has its own (info).
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mcp.CallToolParams{{Name: "log"}, {Name: "count"}, {Name: "count"}, {Name: "progress", Meta: mcp.Meta{"progressToken": "p"}}} {
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		note("%s: %s", p.Name, res.Content[0].(*mcp.TextContent).Text)
	}
	cs.Close()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(seen) // the client hands notifications to its handlers while the call returns
	return append(seen, hl.sorted()...)
}

// sessionlessMCPGo is sessionlessGoSDK with an mcp-go client (which also
// opens the GET stream).
func sessionlessMCPGo(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	hl := &httpLog{}
	tr, err := mgtransport.NewStreamableHTTP(url, mgtransport.WithContinuousListening(), mgtransport.WithHTTPBasicClient(&http.Client{Transport: hl}))
	if err != nil {
		t.Fatal(err)
	}
	c := mgclient.NewClient(tr)
	var mu sync.Mutex
	var seen []string
	c.OnNotification(func(n mgmcp.JSONRPCNotification) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %v", n.Method, n.Params.AdditionalFields))
		mu.Unlock()
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mgmcp.InitializeRequest
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mgmcp.Implementation{Name: "mcp-go-client", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	var results []string
	results = append(results, fmt.Sprintf("session id %q", tr.GetSessionId()))
	if err := c.SetLevel(ctx, mgmcp.SetLevelRequest{Params: mgmcp.SetLevelParams{Level: "error"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"log", "count", "count", "progress"} {
		req := mgmcp.CallToolRequest{}
		req.Params.Name = name
		if name == "progress" {
			req.Params.Meta = &mgmcp.Meta{ProgressToken: "p"}
		}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results = append(results, fmt.Sprintf("%s: %s", name, res.Content[0].(mgmcp.TextContent).Text))
	}
	// The client opens its GET stream on a goroutine of its own once
	// initialized, whenever that goroutine runs: the script may end
	// before it. What the client saw includes the GET's answer (405), so
	// the script ends once it has come.
	if err := hl.answered(ctx, "GET"); err != nil {
		t.Fatalf("the client's GET stream: %v", err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	return append(append(results, seen...), hl.sorted()...)
}

// recordSessionless records script against a go-sdk server without
// sessions through the HTTP tap and returns what the client saw and the
// cassette.
func recordSessionless(t *testing.T, script func(*testing.T, string) []string) ([]string, *cassettes.Cassette) {
	t.Helper()
	up := sessionlessServer(t)
	rec, err := recorder.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	tap, err := recorder.NewHTTP(up.URL+"/mcp", rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(tap)
	live := script(t, ts.URL+"/mcp")
	ts.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return live, rec.Cassette()
}

// A go-sdk server without sessions (stateful era), recorded through the
// HTTP tap, replays as one to real go-sdk and mcp-go clients: no
// Mcp-Session-Id on the initialize answer nor ever after, requests
// without one answered from one replay state (the two counts answer n=1
// then n=2, as recorded),
// logging/setLevel kept by no session (each request logs at info, as the
// server did), progress on the POST's stream, and GET (mcp-go's listening
// stream) and DELETE refused with 405, Allow: POST, and an Mcp-Session-Id
// a client makes up ignored. The replay's client sees what the live client
// saw, the HTTP exchanges included.
func TestSessionlessServerReplaysWithoutSessions(t *testing.T) {
	for name, script := range map[string]func(*testing.T, string) []string{"go-sdk": sessionlessGoSDK, "mcp-go": sessionlessMCPGo} {
		t.Run(name, func(t *testing.T) {
			live, c := recordSessionless(t, script)
			if !slices.Contains(live, "count: n=2") || !slices.Contains(live, `session id ""`) {
				t.Fatalf("live: %q", live)
			}
			srv, _, h := replayHTTP(t, c, nil)
			if d := cmp.Diff(live, script(t, srv.URL+"/mcp")); d != "" {
				t.Errorf("(-live +replay):\n%s", d)
			}
			// An Mcp-Session-Id is ignored, as by the recorded server;
			// DELETE has nothing to end.
			for _, x := range []struct {
				method, body string
				want         int
			}{
				{"POST", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"count"}}`, http.StatusOK},
				{"DELETE", "", http.StatusMethodNotAllowed},
			} {
				req, _ := http.NewRequestWithContext(t.Context(), x.method, srv.URL+"/mcp", strings.NewReader(x.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", "made-up")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != x.want || resp.Header.Get("Mcp-Session-Id") != "" {
					t.Errorf("%s with a made-up session id: %d, session %q; want %d and none", x.method, resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), x.want)
				}
			}
			if n := h.Sessions(); n != 0 {
				t.Errorf("%d sessions, want none", n)
			}
		})
	}
}
