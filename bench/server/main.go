// Command server is the hand-written go-sdk server of the benchmarks: one
// tool, echo, answering its text. On stdio by default; with -http ADDR it
// serves Streamable HTTP at /mcp (stateless with -stateless). On stdio,
// with BENCH_SERVER_RUSAGE=FILE in its environment, it writes the CPU time
// it used itself to FILE when it exits, so that the harness can tell the
// server's share of a tap's CPU from the tap's own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/mcpmock/mcpmock/internal/rusage"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http: stateless mode")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(ctx context.Context, req *mcp.CallToolRequest, args echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
		})
	if *addr == "" {
		err := server.Run(context.Background(), &mcp.StdioTransport{})
		if path := os.Getenv("BENCH_SERVER_RUSAGE"); path != "" {
			u, _ := rusage.Self()
			os.WriteFile(path, []byte(strconv.FormatInt(int64(u.CPU()), 10)), 0o644)
		}
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", l.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	log.Fatal(http.Serve(l, mux))
}
