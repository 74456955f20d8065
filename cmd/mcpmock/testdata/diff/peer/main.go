// Command peer is the weather server that the cassette diff golden tests
// record (cassette_diff_test.go, TestCassetteDiffRecordings): a go-sdk
// server on stdio whose tools differ by the variant given as its argument.
//
//	peer base         get_weather(location, units?), add(a, b), echo(text)
//	peer required     get_weather gained a required argument: country
//	peer description  get_weather's description changed
//
// Its tools/list has pages of two tools, so a recording holds two pages.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type weatherIn struct {
	Location string `json:"location" jsonschema:"city name"`
	Units    string `json:"units,omitempty" jsonschema:"c or f"`
}

type weatherInCountry struct {
	Location string `json:"location" jsonschema:"city name"`
	Country  string `json:"country" jsonschema:"ISO 3166 country code"`
	Units    string `json:"units,omitempty" jsonschema:"c or f"`
}

type weatherOut struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type echoIn struct {
	Text string `json:"text"`
}

func weather(location string) (*mcp.CallToolResult, weatherOut, error) {
	out := weatherOut{Temperature: 22.5, Conditions: "Partly cloudy"}
	text := fmt.Sprintf("Current weather in %s: %.1f°C, %s", location, out.Temperature, out.Conditions)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

func main() {
	variant := "base"
	if len(os.Args) > 1 {
		variant = os.Args[1]
	}
	version := map[string]string{"base": "1.0.0", "required": "2.0.0", "description": "1.0.1"}[variant]
	if version == "" {
		fmt.Fprintf(os.Stderr, "peer: unknown variant %q (want base, required or description)\n", variant)
		os.Exit(2)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "diff-weather", Version: version}, &mcp.ServerOptions{PageSize: 2})
	description := "Get current weather information for a location"
	if variant == "description" {
		description = "Get the current weather for a city, in degrees Celsius"
	}
	tool := &mcp.Tool{Name: "get_weather", Description: description}
	if variant == "required" {
		mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in weatherInCountry) (*mcp.CallToolResult, weatherOut, error) {
			return weather(in.Location + ", " + in.Country)
		})
	} else {
		mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
			return weather(in.Location)
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "peer: %v\n", err)
		os.Exit(1)
	}
}
