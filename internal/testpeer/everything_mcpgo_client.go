package testpeer

import (
	"context"
	"fmt"
	protocol "github.com/mcpmock/mcpmock/internal/mcp"
	"io"
	"log/slog"
	"net/http"
	"sync"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// RunEverythingMCPGo is [RunEverything] with an mcp-go client: the same
// script, the same Wire. (mcp-go's client has no resources/subscribe of its
// own; the script sends it through the transport.)
func RunEverythingMCPGo(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts EverythingOptions) (Wire, error) {
	defer r.Close() // the mcp-go transport closes w, not r
	l := &wireLog{}
	return runEverythingMCPGo(ctx, opts, l, mcpgotransport.NewIO(quietReader{&wiredReader{r: r, w: l}}, wiredWriter{w, l}, nil))
}

// RunEverythingMCPGoHTTP is [RunEverythingMCPGo] over Streamable HTTP at
// url, with the standalone GET stream.
func RunEverythingMCPGoHTTP(ctx context.Context, url string, opts EverythingOptions) (Wire, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections() // as RunEverythingHTTP
	l := &wireLog{}
	t, err := mcpgotransport.NewStreamableHTTP(url,
		mcpgotransport.WithHTTPBasicClient(&http.Client{Transport: wiredRoundTripper{base, l}}),
		mcpgotransport.WithContinuousListening(),
		mcpgotransport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return nil, fmt.Errorf("mcp-go client: %w", err)
	}
	return runEverythingMCPGo(ctx, opts, l, t)
}

// mcpgoRoots is the roots of the mcp-go client: n of them.
type mcpgoRoots struct {
	mu sync.Mutex // guards n
	n  int
}

func (m *mcpgoRoots) set(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n = n
}

func (m *mcpgoRoots) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := &mcpgo.ListRootsResult{Roots: []mcpgo.Root{}}
	for i := range m.n {
		r := root(i)
		res.Roots = append(res.Roots, mcpgo.Root{URI: r.URI, Name: r.Name})
	}
	return res, nil
}

func runEverythingMCPGo(ctx context.Context, opts EverythingOptions, w *wireLog, t mcpgotransport.Interface) (Wire, error) {
	opts = opts.withDefaults()
	roots := &mcpgoRoots{n: opts.Roots}
	c := mcpgoclient.NewClient(t, mcpgoclient.WithRootsHandler(roots))
	defer c.Close()
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("mcp-go client: %s: %w", what, err)
		}
		return nil
	}
	if err := step("start", c.Start(ctx)); err != nil {
		return w.lines(), err
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = protocol.Version20251125
	init.Params.ClientInfo = mcpgo.Implementation{Name: everythingClientName, Version: "1.0.0"}
	init.Params.Capabilities.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	if _, err := c.Initialize(ctx, init); err != nil {
		return w.lines(), step("initialize", err)
	}
	if err := step("effects of initialized", w.await(ctx, opts.Wait, rootsLog, 1)); err != nil {
		return w.lines(), err
	}
	_, err := t.SendRequest(ctx, mcpgotransport.JSONRPCRequest{
		JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(int64(1_000_000)), Method: "resources/subscribe",
		Params: map[string]any{"uri": EverythingResourceURI},
	})
	if err := step("subscribe", err); err != nil {
		return w.lines(), err
	}
	roots.set(opts.Roots + 1)
	if err := step("roots/list_changed", c.RootListChanges(ctx)); err != nil {
		return w.lines(), err
	}
	if err := step("effects of roots/list_changed", w.await(ctx, opts.Wait, rootsLog, 2)); err != nil {
		return w.lines(), err
	}
	var touch mcpgo.CallToolRequest
	touch.Params.Name = ToolTouch
	if _, err := c.CallTool(ctx, touch); err != nil {
		return w.lines(), step("tools/call touch", err)
	}
	if err := step("resources/updated of touch", w.await(ctx, opts.Wait, touchedLine, 1)); err != nil {
		return w.lines(), err
	}
	var long mcpgo.CallToolRequest
	long.Params.Name = ToolLongOperation
	long.Params.Arguments = map[string]any{"steps": longOperationSteps}
	long.Params.Meta = &mcpgo.Meta{ProgressToken: "everything-progress"}
	if _, err := c.CallTool(ctx, long); err != nil {
		return w.lines(), step("tools/call long_operation", err)
	}
	if err := step("progress of long_operation", w.awaitProgress(ctx, opts.Wait)); err != nil {
		return w.lines(), err
	}
	return w.lines(), step("close", c.Close())
}
