package replayer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpmock/mcpmock/replayer"
)

// mcpgoHandlers answer the server's requests as protocolClient does.
type mcpgoHandlers struct{ name string }

func (h mcpgoHandlers) CreateMessage(ctx context.Context, req mgmcp.CreateMessageRequest) (*mgmcp.CreateMessageResult, error) {
	return &mgmcp.CreateMessageResult{SamplingMessage: mgmcp.SamplingMessage{Role: "assistant", Content: mgmcp.TextContent{Type: "text", Text: "Paris"}}, Model: "m"}, nil
}

func (h mcpgoHandlers) Elicit(ctx context.Context, req mgmcp.ElicitationRequest) (*mgmcp.ElicitationResult, error) {
	return &mgmcp.ElicitationResult{ElicitationResponse: mgmcp.ElicitationResponse{Action: "accept", Content: map[string]any{"name": h.name}}}, nil
}

func (h mcpgoHandlers) ListRoots(ctx context.Context, req mgmcp.ListRootsRequest) (*mgmcp.ListRootsResult, error) {
	return &mgmcp.ListRootsResult{Roots: []mgmcp.Root{{URI: "file:///project", Name: "project"}}}, nil
}

// mcpgoScript is protocolClient.script with an mcp-go client: pages by
// cursor, progress, logging, sampling, elicitation, roots, a multi round
// trip call, and a tool list change; the same outcome lines.
func mcpgoScript(ctx context.Context, c *mgclient.Client, logging bool) ([]string, error) {
	progress := make(chan float64, 10)
	changed := make(chan struct{}, 10)
	logs := make(chan string, 10)
	c.OnNotification(func(n mgmcp.JSONRPCNotification) {
		switch n.Method {
		case "notifications/progress":
			progress <- n.Params.AdditionalFields["progress"].(float64)
		case "notifications/tools/list_changed":
			changed <- struct{}{}
		case "notifications/message":
			logs <- fmt.Sprintf("%v %v", n.Params.AdditionalFields["level"], n.Params.AdditionalFields["data"])
		}
	})
	var out []string
	add := func(s string) { out = append(out, s) }
	list := func() (string, error) {
		var names []string
		var cursor mgmcp.Cursor
		for range 20 {
			var req mgmcp.ListToolsRequest
			req.Params.Cursor = cursor
			res, err := c.ListToolsByPage(ctx, req)
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
	tools, err := list()
	if err != nil {
		return out, err
	}
	add("tools " + tools)
	call := func(name string, meta *mgmcp.Meta) {
		var req mgmcp.CallToolRequest
		req.Params.Name = name
		req.Params.Arguments = map[string]any{} // as go-sdk's client sends
		req.Params.Meta = meta
		res, err := c.CallTool(ctx, req)
		if err != nil {
			add(name + " error " + err.Error())
			return
		}
		if len(res.Content) == 0 {
			add(fmt.Sprintf("%s no content: %+v", name, res))
			return
		}
		add(name + " " + res.Content[0].(mgmcp.TextContent).Text)
	}
	call("progress", &mgmcp.Meta{ProgressToken: "tok-1"})
	for range 3 {
		select {
		case p := <-progress:
			add(fmt.Sprint("progress ", p))
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	if logging {
		var req mgmcp.SetLevelRequest
		req.Params.Level = "info"
		if err := c.SetLevel(ctx, req); err != nil {
			return out, err
		}
		call("log", nil)
		add("log " + <-logs)
	}
	// Not mrtr: go-sdk's server answers a client of 2025-11-25 with a
	// retry request that go-sdk's client follows and mcp-go's does not
	// (live as in replay).
	for _, name := range []string{"ask", "elicit", "roots", "grow"} {
		call(name, nil)
	}
	select {
	case <-changed:
		add("tools/list_changed")
	case <-ctx.Done():
		return out, ctx.Err()
	}
	if tools, err = list(); err != nil {
		return out, err
	}
	add("tools " + tools)
	return out, nil
}

func mcpgoClientOptions(version string) []mgclient.ClientOption {
	h := mcpgoHandlers{name: "octocat"}
	return []mgclient.ClientOption{mgclient.WithProtocolVersion(version),
		mgclient.WithSamplingHandler(h), mgclient.WithElicitationHandler(h), mgclient.WithRootsHandler(h)}
}

func runMCPGo(ctx context.Context, c *mgclient.Client, version string) ([]string, error) {
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var init mgmcp.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mgmcp.Implementation{Name: "mcpgo-client", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	return mcpgoScript(ctx, c, true)
}

// A session recorded between go-sdk peers replays to an mcp-go client
// with the same outcome, over stdio and Streamable HTTP, from recorded
// pages and from re-paged ones.
func TestProtocolReplaysToMCPGoClient(t *testing.T) {
	const version = "2025-11-25"
	c, live := recordProtocol(t, 3, version)
	live = slices.DeleteFunc(live, func(s string) bool { return strings.HasPrefix(s, "mrtr ") })
	for _, size := range []int{0, 2} {
		e, err := replayer.New(c, &replayer.Options{PageSize: size})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		clientR, clientW, serverR, serverW := pipePair()
		go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
		got, err := runMCPGo(ctx, mgclient.NewClient(mgtransport.NewIO(clientR, clientW, nil), mcpgoClientOptions(version)...), version)
		clientR.Close()
		if err != nil {
			t.Fatalf("stdio, page size %d: %v (so far %q)", size, err, got)
		}
		if d := cmp.Diff(live, got); d != "" {
			t.Errorf("stdio, page size %d (-live +mcp-go replay):\n%s", size, d)
		}

		h := e.Handler(nil)
		srv := httptest.NewServer(h)
		tr, err := mgtransport.NewStreamableHTTP(srv.URL+"/mcp", mgtransport.WithContinuousListening())
		if err != nil {
			t.Fatal(err)
		}
		got, err = runMCPGo(ctx, mgclient.NewClient(tr, mcpgoClientOptions(version)...), version)
		if err != nil {
			t.Errorf("HTTP, page size %d: %v (so far %q)", size, err, got)
		} else if d := cmp.Diff(live, got); d != "" {
			t.Errorf("HTTP, page size %d (-live +mcp-go replay):\n%s", size, d)
		}
		h.Close()
		srv.Close()
		cancel()
	}
}
