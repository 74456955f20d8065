package mcpmocktest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

func TestMain(m *testing.M) {
	mcpmocktest.Main()
	testpeer.Main()
	os.Exit(m.Run())
}

// The client libraries, protocol eras and ways in that the tests cover.
var (
	libraries = []string{"go-sdk", "mcp-go"}
	eras      = []string{"", "2025-11-25"} // "": the 2026-07-28 probe, falling back
	waysIn    = []string{"conn", "command", "url"}
)

// call is one tool call of a client script.
type call struct {
	tool string
	args map[string]any
}

func weatherCalls(locations ...string) []call {
	var calls []call
	for _, l := range locations {
		calls = append(calls, call{"get_weather", map[string]any{"location": l}})
	}
	return calls
}

// runClient connects a client of the library to srv through the way in,
// makes the calls and returns one line per result:
// "get_weather(New York): TEXT", "... tool error: TEXT" or "... error: MESSAGE".
func runClient(t testing.TB, srv *mcpmocktest.Server, lib, version, way string, calls []call) []string {
	t.Helper()
	ctx := context.Background()
	if lib == "go-sdk" {
		var tr mcp.Transport
		switch way {
		case "conn":
			r, w := srv.Conn()
			tr = &mcp.IOTransport{Reader: r, Writer: w}
		case "command":
			argv, env := srv.Command()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), env...)
			tr = &mcp.CommandTransport{Command: cmd}
		case "url":
			tr = &mcp.StreamableClientTransport{Endpoint: srv.URL()}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("go-sdk connect over %s: %v", way, err)
		}
		defer cs.Close()
		var lines []string
		for _, cl := range calls {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: cl.tool, Arguments: cl.args})
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: error: %v", label(cl), err))
				continue
			}
			var texts []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					texts = append(texts, tc.Text)
				}
			}
			lines = append(lines, line(cl, res.IsError, texts))
		}
		if err := cs.Close(); err != nil && way != "command" {
			t.Errorf("go-sdk close: %v", err)
		}
		return lines
	}

	var tr mcpgotransport.Interface
	switch way {
	case "conn":
		r, w := srv.Conn()
		defer r.Close() // the mcp-go transport closes only w
		tr = mcpgotransport.NewIO(quietReader{r}, w, nil)
	case "command":
		argv, env := srv.Command()
		tr = mcpgotransport.NewStdio(argv[0], env, argv[1:]...)
	case "url":
		h, err := mcpgotransport.NewStreamableHTTP(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		tr = h
	}
	var opts []mcpgoclient.ClientOption
	if version != "" {
		opts = append(opts, mcpgoclient.WithProtocolVersion(version))
	}
	c := mcpgoclient.NewClient(tr, opts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go start over %s: %v", way, err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcpgo.Implementation{Name: "test-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("mcp-go initialize over %s: %v", way, err)
	}
	var lines []string
	for _, cl := range calls {
		var req mcpgo.CallToolRequest
		req.Params.Name = cl.tool
		req.Params.Arguments = cl.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: error: %v", label(cl), err))
			continue
		}
		var texts []string
		for _, content := range res.Content {
			if tc, ok := mcpgo.AsTextContent(content); ok {
				texts = append(texts, tc.Text)
			}
		}
		lines = append(lines, line(cl, res.IsError, texts))
	}
	if err := c.Close(); err != nil && way != "command" {
		t.Errorf("mcp-go close: %v", err)
	}
	return lines
}

func label(c call) string {
	if loc, ok := c.args["location"]; ok {
		return fmt.Sprintf("%s(%v)", c.tool, loc)
	}
	return c.tool
}

func line(c call, isError bool, texts []string) string {
	text := strings.Join(strings.Fields(strings.Join(texts, " ")), " ")
	if isError {
		return fmt.Sprintf("%s: tool error: %s", label(c), text)
	}
	return fmt.Sprintf("%s: %s", label(c), text)
}

// quietReader reports a read on a closed pipe as EOF, which the mcp-go
// transport does not log.
type quietReader struct{ io.ReadCloser }

func (r quietReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if errors.Is(err, io.ErrClosedPipe) {
		err = io.EOF
	}
	return n, err
}
