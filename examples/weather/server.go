// Package weather is the get_weather example of the MCP tools specification:
// a server with one tool, get_weather, and a client that asks it about three
// places, one of which (Atlantis) answers with the specification's rate-limit
// tool error.
//
// Run the server on stdio and the client against it:
//
//	go run ./examples/weather/client -- go run ./examples/weather/server
//
// Or in-process, as mcpmock demo does:
//
//	go weather.Serve(ctx, serverIn, serverOut)
//	lines, err := weather.RunClient(ctx, serverOut, serverIn, weather.ClientOptions{})
package weather

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RateLimitedLocation is the location for which get_weather answers with a
// tool error (isError: true) instead of the weather.
const RateLimitedLocation = "Atlantis"

// RateLimitMessage is the text of get_weather's tool error.
const RateLimitMessage = "Failed to fetch weather data: API rate limit exceeded"

// ToolName is the name of the server's only tool.
const ToolName = "get_weather"

type weatherInput struct {
	Location string `json:"location" jsonschema:"City name or zip code"`
}

// NewServer returns the weather server: a go-sdk server with the tool
// get_weather, whose input is a required string location.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Title: "Weather Information Provider", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        ToolName,
		Title:       "Weather Information Provider",
		Description: "Get current weather information for a location",
	}, getWeather)
	return s
}

func getWeather(ctx context.Context, req *mcp.CallToolRequest, in weatherInput) (*mcp.CallToolResult, any, error) {
	if in.Location == RateLimitedLocation {
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: RateLimitMessage}},
			IsError: true,
		}, nil, nil
	}
	text := fmt.Sprintf("Current weather in %s:\nTemperature: 72°F\nConditions: Partly cloudy", in.Location)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// Serve runs the weather server on r (client to server) and w (server to
// client), newline-delimited JSON-RPC as on stdio, until r reaches EOF (then
// it returns nil) or ctx ends.
func Serve(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return NewServer().Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}
