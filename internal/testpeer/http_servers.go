package testpeer

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPServerOptions configure [HTTPHandler]. The zero value is a stateful
// server answering requests with SSE streams.
type HTTPServerOptions struct {
	// JSONResponse makes the go-sdk server answer requests with
	// application/json instead of an SSE stream (mcp-go chooses by itself:
	// JSON unless the request streams notifications).
	JSONResponse bool
	// Stateless serves without sessions (no Mcp-Session-Id, no GET
	// stream).
	Stateless bool
}

// HTTPHandler returns the test server of the given kind ([GoSDK] or
// [MCPGo]; the tools are those of [Serve]) over HTTP: Streamable HTTP at
// /mcp, and the HTTP+SSE transport of 2024-11-05 at /sse (go-sdk: messages
// posted to /sse?sessionid=...; mcp-go: to /message?sessionId=...). The
// crash tool never answers.
func HTTPHandler(kind string, opts HTTPServerOptions) (http.Handler, error) {
	noCrash := func() {}
	mux := http.NewServeMux()
	switch kind {
	case GoSDK:
		s := newGoSDKServer(noCrash)
		get := func(*http.Request) *mcp.Server { return s }
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			JSONResponse: opts.JSONResponse,
			Stateless:    opts.Stateless,
			Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		}))
		mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	case MCPGo:
		s := newMCPGoServer(noCrash)
		var hopts []server.StreamableHTTPOption
		hopts = append(hopts, server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if opts.Stateless {
			hopts = append(hopts, server.WithStateLess(true))
		} else {
			hopts = append(hopts, server.WithStateful(true))
		}
		mux.Handle("/mcp", server.NewStreamableHTTPServer(s, hopts...))
		sse := server.NewSSEServer(s)
		mux.Handle("/sse", sse)
		mux.Handle("/message", sse)
	default:
		return nil, fmt.Errorf("testpeer: no HTTP server of kind %q (want %q or %q)", kind, GoSDK, MCPGo)
	}
	return mux, nil
}
