package replayer_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// A real go-sdk server with the protocol's less common messages: pages,
// progress, logging, sampling, elicitation, roots and a tool list change.
func protocolServer(pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "protocol-server", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	type noIn struct{}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	for _, name := range []string{"t1", "t2", "t3", "t4", "t5"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return text(name), nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3})
		}
		return text("progressed"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "a debug line"})
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: "a warning"})
		return text("logged"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "capital of France?"}}}})
		if err != nil {
			return nil, nil, err
		}
		return text("sampled " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return text(fmt.Sprintf("elicited %s %v", res.Action, res.Content["name"])), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return text("root " + res.Roots[0].URI), nil, nil
	})
	// Multi round-trip (2026-07-28): two rounds of input, told apart only
	// by requestState; older clients get the elicitations as requests.
	mcp.AddTool(s, &mcp.Tool{Name: "mrtr"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		ask := func(state string) *mcp.CallToolResult {
			return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Mode: "form", Message: "name for " + state,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}
		}
		switch req.Params.RequestState {
		case "":
			return ask("round-1"), nil, nil
		case "round-1":
			return ask("round-2"), nil, nil
		}
		name := req.Params.InputResponses["who"].(*mcp.ElicitResult).Content["name"]
		return text(fmt.Sprintf("two rounds, %v", name)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "extra"}, func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return text("extra"), nil, nil
		})
		return text("grown"), nil, nil
	})
	return s
}

// protocolClient is a real go-sdk client with handlers for every server
// request; it runs a script and returns what it saw.
type protocolClient struct {
	name     string // the elicitation answer: a different one makes a reply that differs
	progress chan float64
	changed  chan struct{}
	logs     chan string
}

func newProtocolClient(name string) *protocolClient {
	return &protocolClient{name: name, progress: make(chan float64, 10), changed: make(chan struct{}, 10), logs: make(chan string, 10)}
}

func (pc *protocolClient) client() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "protocol-client", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": pc.name}}, nil
		},
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) { pc.changed <- struct{}{} },
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			pc.progress <- req.Params.Progress
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			pc.logs <- fmt.Sprintf("%s %v", req.Params.Level, req.Params.Data)
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///project", Name: "project"})
	return c
}

func listAll(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	var names []string
	cursor := ""
	for range 20 {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return strings.Join(names, ","), nil
}

// script runs the session and returns its outcome, one line per step.
func (pc *protocolClient) script(ctx context.Context, cs *mcp.ClientSession, logging bool) ([]string, error) {
	var out []string
	add := func(s string) { out = append(out, s) }
	tools, err := listAll(ctx, cs)
	if err != nil {
		return out, err
	}
	add("tools " + tools)
	call := func(name string, params *mcp.CallToolParams) error {
		if params == nil {
			params = &mcp.CallToolParams{}
		}
		params.Name = name
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			add(name + " error " + err.Error())
			return nil
		}
		add(name + " " + res.Content[0].(*mcp.TextContent).Text)
		return nil
	}
	p := &mcp.CallToolParams{}
	p.SetProgressToken("tok-1")
	call("progress", p)
	for range 3 {
		add(fmt.Sprint("progress ", <-pc.progress))
	}
	if logging {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			return out, err
		}
		call("log", nil)
		add("log " + <-pc.logs)
	}
	call("ask", nil)
	call("elicit", nil)
	call("roots", nil)
	call("mrtr", nil)
	call("grow", nil)
	select {
	case <-pc.changed:
		add("tools/list_changed")
	case <-ctx.Done():
		return out, ctx.Err()
	}
	if tools, err = listAll(ctx, cs); err != nil {
		return out, err
	}
	add("tools " + tools)
	return out, nil
}

// pipePair is an in-process stdio connection.
func pipePair() (clientR io.ReadCloser, clientW io.WriteCloser, serverR io.ReadCloser, serverW io.WriteCloser) {
	serverR, clientW = io.Pipe()
	clientR, serverW = io.Pipe()
	return
}

// recordProtocol records the session of a real client with the real
// server through a tap, and returns the cassette and the live outcome.
func recordProtocol(t *testing.T, pageSize int, version string) (*cassettes.Cassette, []string) {
	t.Helper()
	var out []string
	pc := newProtocolClient("octocat")
	c := recordGoSDK(t, protocolServer(pageSize), pc.client(), version, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		if out, err = pc.script(ctx, cs, version != "2026-07-28"); err != nil {
			return fmt.Errorf("%v (so far %q)", err, out)
		}
		return nil
	})
	return c, out
}

// replayStdio runs the client script against a replay over stdio.
func replayStdio(t *testing.T, c *cassettes.Cassette, opts *replayer.Options, name, version string) ([]string, error) {
	t.Helper()
	e, err := replayer.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	clientR, clientW, serverR, serverW := pipePair()
	done := make(chan error, 1)
	go func() {
		done <- e.Serve(ctx, serverR, serverW)
		serverW.Close()
	}()
	pc := newProtocolClient(name)
	cs, err := pc.client().Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	out, serr := pc.script(ctx, cs, version != "2026-07-28")
	cs.Close()
	clientW.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	return out, serr
}

// replayStreamable runs the client script against a replay over
// Streamable HTTP.
func replayStreamable(t *testing.T, c *cassettes.Cassette, opts *replayer.Options, version string) ([]string, error) {
	t.Helper()
	e, err := replayer.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pc := newProtocolClient("octocat")
	cs, err := pc.client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	return pc.script(ctx, cs, version != "2026-07-28")
}

func TestProtocolReplaysToRealClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			c, live := recordProtocol(t, 3, version)
			if !slices_contains(live, "tools/list_changed") || !strings.Contains(strings.Join(live, "\n"), "extra") {
				t.Fatalf("the live session did not see the list change: %q", live)
			}
			got, err := replayStdio(t, c, nil, "octocat", version)
			if err != nil {
				t.Fatalf("stdio replay: %v (so far %q)", err, got)
			}
			if d := cmp.Diff(live, got); d != "" {
				t.Errorf("stdio replay differs from live (-live +replay):\n%s", d)
			}
			got, err = replayStreamable(t, c, nil, version)
			if err != nil {
				t.Fatalf("HTTP replay: %v (so far %q)", err, got)
			}
			if d := cmp.Diff(live, got); d != "" {
				t.Errorf("HTTP replay differs from live (-live +replay):\n%s", d)
			}
		})
	}
}

func slices_contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestRepagedListsAreTheSameToAClient(t *testing.T) {
	paged, live := recordProtocol(t, 2, "2025-11-25")
	whole, live2 := recordProtocol(t, 0, "2025-11-25")
	if d := cmp.Diff(live, live2); d != "" {
		t.Fatalf("the two live sessions differ:\n%s", d)
	}
	for name, c := range map[string]*cassettes.Cassette{"paged": paged, "unpaged": whole} {
		for _, size := range []int{1, 4} {
			got, err := replayStdio(t, c, &replayer.Options{PageSize: size}, "octocat", "2025-11-25")
			if err != nil {
				t.Fatalf("%s, page size %d: %v", name, size, err)
			}
			if d := cmp.Diff(live, got); d != "" {
				t.Errorf("%s cassette re-paged by %d (-live +replay):\n%s", name, size, d)
			}
		}
	}
	// The cassette's own setting, over HTTP.
	whole.Replay = &cassettes.Replay{PageSize: 2}
	got, err := replayStreamable(t, whole, nil, "2025-11-25")
	if err != nil || !cmp.Equal(live, got) {
		t.Errorf("re-paged by the cassette over HTTP: %v\n%s", err, cmp.Diff(live, got))
	}
}

func TestReplyMismatch(t *testing.T) {
	c, _ := recordProtocol(t, 0, "2025-11-25")
	var mu sync.Mutex
	var seen []replayer.ReplyMismatch
	opts := &replayer.Options{OnReplyMismatch: func(m replayer.ReplyMismatch) { mu.Lock(); seen = append(seen, m); mu.Unlock() }}
	got, err := replayStdio(t, c, opts, "mallory", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	if !slices_contains(got, "elicit elicited accept octocat") {
		t.Errorf("lenient replay should answer as recorded: %q", got)
	}
	mu.Lock()
	// The elicit tool's elicitation and the mrtr tool's (go-sdk fulfils
	// input requests of older clients with real requests).
	if len(seen) != 2 {
		t.Errorf("got %d mismatches, want 2", len(seen))
	}
	for _, m := range seen {
		if m.Method != "elicitation/create" || len(m.Differences) == 0 {
			t.Errorf("mismatch %s: %v", m.Method, m.Differences)
		}
	}
	mu.Unlock()
	opts.Strict = true
	got, _ = replayStdio(t, c, opts, "mallory", "2025-11-25")
	found := false
	for _, l := range got {
		if strings.HasPrefix(l, "elicit error") && strings.Contains(l, "differs from the recording") {
			found = true
		}
	}
	if !found {
		t.Errorf("strict replay should fail the elicit call: %q", got)
	}
}
