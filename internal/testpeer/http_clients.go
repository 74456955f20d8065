package testpeer

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure a scripted client over HTTP. The zero value is
// Streamable HTTP with http.DefaultClient.
type HTTPOptions struct {
	ClientOptions
	// SSE selects the HTTP+SSE transport of 2024-11-05: the URL is then the
	// event stream's (".../sse"), not the MCP endpoint's.
	SSE bool
	// Header is added to every request (an Authorization, an Origin).
	Header http.Header
	// HTTPClient is the client to use; nil means http.DefaultClient.
	HTTPClient *http.Client
}

func (o HTTPOptions) httpClient() *http.Client {
	c := o.HTTPClient
	if c == nil {
		c = http.DefaultClient
	}
	if len(o.Header) == 0 {
		return c
	}
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = headerTransport{base, o.Header}
	return &cc
}

type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// RunGoSDKHTTP is [RunGoSDK] over HTTP: a go-sdk client with
// StreamableClientTransport (or SSEClientTransport when opts.SSE) on url. The
// script and the Transcript are the same, so that a session seen over stdio
// and over HTTP compare equal.
func RunGoSDKHTTP(ctx context.Context, url string, opts HTTPOptions) (Transcript, error) {
	name, version := opts.impl("testpeer-gosdk-client")
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil)
	var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: opts.httpClient(), DisableStandaloneSSE: false}
	if opts.SSE {
		t = &mcp.SSEClientTransport{Endpoint: url, HTTPClient: opts.httpClient()}
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("go-sdk client: connect: %w", err)
	}
	defer cs.Close()
	tr, err := goSDKScript(ctx, cs)
	if err != nil {
		return tr, err
	}
	return tr, cs.Close()
}

// goSDKScript is the script of RunGoSDK on a connected session.
func goSDKScript(ctx context.Context, cs *mcp.ClientSession) (Transcript, error) {
	var tr Transcript
	fail := func(op string, err error) (bool, error) {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			tr = append(tr, Step{Op: op, Error: protocolError(werr.Code, werr.Message)})
			return false, nil
		}
		return true, fmt.Errorf("go-sdk client: %s: %w", op, err)
	}
	var cursor string
	for n := 1; n <= maxPages; n++ {
		op := pageOp(n)
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			stop, err := fail(op, err)
			if stop {
				return tr, err
			}
			break
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		tr = append(tr, Step{Op: op, Result: pageResult(names)})
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	for _, c := range script() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			if stop, err := fail(c.op(), err); stop {
				return tr, err
			}
			continue
		}
		tr = append(tr, Step{Op: c.op(), Result: summarizeGoSDK(res)})
	}
	return tr, nil
}

// RunMCPGoHTTP is [RunMCPGo] over HTTP: mcp-go's streamable HTTP client (or
// its SSE client when opts.SSE) on url.
func RunMCPGoHTTP(ctx context.Context, url string, opts HTTPOptions) (Transcript, error) {
	var copts []mcpgoclient.ClientOption
	if opts.ProtocolVersion != "" {
		copts = append(copts, mcpgoclient.WithProtocolVersion(opts.ProtocolVersion))
	}
	headers := map[string]string{}
	for k := range opts.Header {
		headers[k] = opts.Header.Get(k)
	}
	var t mcpgotransport.Interface
	var err error
	if opts.SSE {
		t, err = mcpgotransport.NewSSE(url, mcpgotransport.WithHTTPClient(opts.httpClient()), mcpgotransport.WithHeaders(headers))
	} else {
		t, err = mcpgotransport.NewStreamableHTTP(url, mcpgotransport.WithHTTPBasicClient(opts.httpClient()), mcpgotransport.WithHTTPHeaders(headers))
	}
	if err != nil {
		return nil, fmt.Errorf("mcp-go client: %w", err)
	}
	c := mcpgoclient.NewClient(t, copts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("mcp-go client: start: %w", err)
	}
	name, version := opts.impl("testpeer-mcpgo-client")
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = opts.ProtocolVersion
	init.Params.ClientInfo = mcpgo.Implementation{Name: name, Version: version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("mcp-go client: initialize: %w", err)
	}
	tr, err := mcpgoScript(ctx, c)
	if err != nil {
		return tr, err
	}
	return tr, c.Close()
}

// mcpgoScript is the script of RunMCPGo on an initialized client.
func mcpgoScript(ctx context.Context, c *mcpgoclient.Client) (Transcript, error) {
	var tr Transcript
	fail := func(op string, err error) (bool, error) {
		if code, msg, ok := mcpgoProtocolError(err); ok {
			tr = append(tr, Step{Op: op, Error: protocolError(code, msg)})
			return false, nil
		}
		return true, fmt.Errorf("mcp-go client: %s: %w", op, err)
	}
	var cursor mcpgo.Cursor
	for n := 1; n <= maxPages; n++ {
		op := pageOp(n)
		var req mcpgo.ListToolsRequest
		req.Params.Cursor = cursor
		res, err := c.ListToolsByPage(ctx, req)
		if err != nil {
			stop, err := fail(op, err)
			if stop {
				return tr, err
			}
			break
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		tr = append(tr, Step{Op: op, Result: pageResult(names)})
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	for _, call := range script() {
		var req mcpgo.CallToolRequest
		req.Params.Name = call.name
		req.Params.Arguments = call.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			if stop, err := fail(call.op(), err); stop {
				return tr, err
			}
			continue
		}
		tr = append(tr, Step{Op: call.op(), Result: summarizeMCPGo(res)})
	}
	return tr, nil
}
