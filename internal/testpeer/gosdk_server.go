package testpeer

import (
	"context"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageSize is the page size of tools/list on both server implementations, so
// that the nine tools come in several pages.
const pageSize = 3

// methodDiscover is the 2026-07-28 discovery request.
const methodDiscover = "server/discover"

type (
	weatherIn struct {
		Location string `json:"location" jsonschema:"city name or zip code"`
	}
	echoIn struct {
		Text string `json:"text,omitempty" jsonschema:"the text to echo"`
	}
	echoOut struct {
		Echo string `json:"echo"`
	}
	addIn struct {
		A float64 `json:"a" jsonschema:"the first addend"`
		B float64 `json:"b" jsonschema:"the second addend"`
	}
	slowIn struct {
		MS float64 `json:"ms,omitempty" jsonschema:"how long to sleep, in milliseconds"`
	}
	progressIn struct {
		Steps float64 `json:"steps,omitempty" jsonschema:"how many progress notifications to send"`
	}
	noIn struct{}
)

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// newGoSDKServer returns the go-sdk server with the test tools. crash is
// called by the crash tool, which then waits for ctx to end without answering.
func newGoSDKServer(crash func()) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testpeer-gosdk", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: pageSize})
	mcp.AddTool(s, &mcp.Tool{Name: toolGetWeather, Description: "Get current weather information for a location"},
		func(ctx context.Context, req *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			if in.Location == rateLimitedLocation {
				res := textResult(rateLimitText)
				res.IsError = true
				return res, nil, nil
			}
			return textResult(weatherText(in.Location)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolEcho, Description: "Echo the text back, also as structured content"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return textResult(in.Text), echoOut{Echo: in.Text}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolImage, Description: "Return a small PNG image"},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pngBytes(), MIMEType: imageMIMEType}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolAudio, Description: "Return a short WAV clip"},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wavBytes(), MIMEType: audioMIMEType}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolResource, Description: "Return an embedded text resource"},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{
				Resource: &mcp.ResourceContents{URI: resourceURI, MIMEType: resourceMIMEType, Text: resourceText},
			}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolAdd, Description: "Add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return textResult(sumText(in.A, in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolCrash, Description: "Kill the server in the middle of the call"},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			crash()
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolSlow, Description: "Sleep for ms milliseconds, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			if err := sleep(ctx, in.MS); err != nil {
				return nil, nil, err
			}
			return textResult(doneText), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: toolProgress, Description: "Send steps progress notifications, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				for i := range int(in.Steps) {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i + 1), Total: in.Steps,
					})
					if err != nil {
						return nil, nil, err
					}
				}
			}
			return textResult(okText), nil, nil
		})
	return s
}

// sleep waits ms milliseconds or until ctx ends.
func sleep(ctx context.Context, ms float64) error {
	t := time.NewTimer(time.Duration(ms * float64(time.Millisecond)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func serveGoSDK(ctx context.Context, r io.ReadCloser, w io.WriteCloser, legacy bool, crash func()) error {
	var t mcp.Transport = &mcp.IOTransport{Reader: r, Writer: w}
	if legacy {
		t = legacyTransport{t}
	}
	return newGoSDKServer(crash).Run(ctx, t)
}

// legacyTransport makes a go-sdk server look like one of the stateful era:
// its connection answers server/discover with -32601 (method not found)
// itself, so the server never sees the request.
type legacyTransport struct{ mcp.Transport }

func (t legacyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return legacyConn{c}, nil
}

type legacyConn struct{ mcp.Connection }

// Read returns the next message other than a server/discover request, which
// it answers with method not found.
func (c legacyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.Method != methodDiscover || !req.IsCall() {
			return msg, nil
		}
		resp := &jsonrpc.Response{
			ID:    req.ID,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + methodDiscover},
		}
		if err := c.Connection.Write(ctx, resp); err != nil {
			return nil, err
		}
	}
}
