package testpeer

import (
	"context"
	"encoding/base64"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// mcpgoStdioMu serializes the mcp-go stdio servers of one process: mcp-go's
// StdioServer keeps a single process-wide session (its writer, its
// notification channel, its initialized flag), so two of them cannot run at
// once.
var mcpgoStdioMu sync.Mutex

// newMCPGoServer returns the mcp-go server with the test tools. crash is
// called by the crash tool, which then waits for ctx to end without answering.
func newMCPGoServer(crash func()) *server.MCPServer {
	s := server.NewMCPServer("testpeer-mcpgo", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithPaginationLimit(pageSize),
	)
	s.AddTool(mcp.NewTool(toolGetWeather,
		mcp.WithDescription("Get current weather information for a location"),
		mcp.WithString("location", mcp.Required(), mcp.Description("city name or zip code")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		location := req.GetString("location", "")
		if location == rateLimitedLocation {
			return mcp.NewToolResultError(rateLimitText), nil
		}
		return mcp.NewToolResultText(weatherText(location)), nil
	})
	s.AddTool(mcp.NewTool(toolEcho,
		mcp.WithDescription("Echo the text back, also as structured content"),
		mcp.WithString("text", mcp.Description("the text to echo")),
		mcp.WithOutputSchema[echoOut](),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := req.GetString("text", "")
		res := mcp.NewToolResultText(text)
		res.StructuredContent = echoOut{Echo: text}
		return res, nil
	})
	s.AddTool(mcp.NewTool(toolImage, mcp.WithDescription("Return a small PNG image")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data := base64.StdEncoding.EncodeToString(pngBytes())
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(data, imageMIMEType)}}, nil
		})
	s.AddTool(mcp.NewTool(toolAudio, mcp.WithDescription("Return a short WAV clip")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data := base64.StdEncoding.EncodeToString(wavBytes())
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(data, audioMIMEType)}}, nil
		})
	s.AddTool(mcp.NewTool(toolResource, mcp.WithDescription("Return an embedded text resource")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: resourceURI, MIMEType: resourceMIMEType, Text: resourceText,
			})}}, nil
		})
	s.AddTool(mcp.NewTool(toolAdd,
		mcp.WithDescription("Add two numbers"),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("the first addend")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("the second addend")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(sumText(req.GetFloat("a", 0), req.GetFloat("b", 0))), nil
	})
	s.AddTool(mcp.NewTool(toolCrash, mcp.WithDescription("Kill the server in the middle of the call")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			crash()
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool(toolSlow,
		mcp.WithDescription("Sleep for ms milliseconds, then answer"),
		mcp.WithNumber("ms", mcp.Description("how long to sleep, in milliseconds")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := sleep(ctx, req.GetFloat("ms", 0)); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(doneText), nil
	})
	s.AddTool(mcp.NewTool(toolProgress,
		mcp.WithDescription("Send steps progress notifications, then answer"),
		mcp.WithNumber("steps", mcp.Description("how many progress notifications to send")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		steps := int(req.GetFloat("steps", 0))
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			srv := server.ServerFromContext(ctx)
			for i := range steps {
				err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": req.Params.Meta.ProgressToken,
					"progress":      i + 1,
					"total":         steps,
				})
				if err != nil {
					return nil, err
				}
			}
		}
		return mcp.NewToolResultText(okText), nil
	})
	return s
}

func serveMCPGo(ctx context.Context, r io.ReadCloser, w io.WriteCloser, crash func()) error {
	mcpgoStdioMu.Lock()
	defer mcpgoStdioMu.Unlock()
	ss := server.NewStdioServer(newMCPGoServer(crash))
	ss.SetErrorLogger(log.New(io.Discard, "", 0))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Listen leaves a goroutine blocked in Read when ctx ends; closing r
	// releases it.
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	return ss.Listen(ctx, r, w)
}
