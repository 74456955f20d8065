package weather

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client libraries for [ClientOptions.Library].
const (
	GoSDK = "go-sdk" // github.com/modelcontextprotocol/go-sdk
	MCPGo = "mcp-go" // github.com/mark3labs/mcp-go
)

// Locations are the places the client asks about, in order.
var Locations = []string{"New York", "London", RateLimitedLocation}

// ClientOptions configure [RunClient]. The zero value is a go-sdk client with
// its default protocol negotiation.
type ClientOptions struct {
	// Library is the client library: GoSDK ("go-sdk", also for "") or MCPGo
	// ("mcp-go").
	Library string
	// ProtocolVersion is the protocol version the client asks for; "" is the
	// library's default (2026-07-28, falling back to initialize), and
	// "2025-11-25" pins the stateful era.
	ProtocolVersion string
}

// RunClient connects a client over r (server to client) and w (client to
// server), calls get_weather for each of [Locations], closes the session and
// returns one line per result:
//
//	get_weather(New York): Current weather in New York: Temperature: 72°F Conditions: Partly cloudy
//	get_weather(Atlantis): tool error: Failed to fetch weather data: API rate limit exceeded
//
// At most one ClientOptions is used. A protocol error ends the run with an
// error.
func RunClient(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts ...ClientOptions) ([]string, error) {
	var o ClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	switch o.Library {
	case "", GoSDK:
		return runGoSDK(ctx, &mcp.IOTransport{Reader: r, Writer: w}, o)
	case MCPGo:
		return runMCPGo(ctx, r, w, o)
	default:
		return nil, fmt.Errorf("weather client: unknown library %q (want %q or %q)", o.Library, GoSDK, MCPGo)
	}
}

// RunCommand is [RunClient] against a server started as the command argv,
// spoken to on its stdin and stdout. The server's stderr goes to stderr.
func RunCommand(ctx context.Context, argv []string, stderr io.Writer, opts ...ClientOptions) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("weather client: no server command")
	}
	var o ClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	if o.Library == "" || o.Library == GoSDK {
		// The go-sdk's CommandTransport owns the process: it starts it, and
		// on close ends stdin, then sends SIGTERM, then SIGKILL.
		return runGoSDK(ctx, &mcp.CommandTransport{Command: cmd}, o)
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("weather client: start server: %w", err)
	}
	lines, err := RunClient(ctx, r, w, o)
	w.Close()
	if werr := cmd.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("weather client: server: %w", werr)
	}
	return lines, err
}

// line formats the result of get_weather for location.
func line(location string, isError bool, texts []string) string {
	text := strings.Join(strings.Fields(strings.Join(texts, " ")), " ")
	if isError {
		return fmt.Sprintf("%s(%s): tool error: %s", ToolName, location, text)
	}
	return fmt.Sprintf("%s(%s): %s", ToolName, location, text)
}

func runGoSDK(ctx context.Context, t mcp.Transport, o ClientOptions) ([]string, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "weather-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: o.ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("weather client: connect: %w", err)
	}
	defer cs.Close()
	var lines []string
	for _, loc := range Locations {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"location": loc}})
		if err != nil {
			return lines, fmt.Errorf("weather client: %s(%s): %w", ToolName, loc, err)
		}
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		lines = append(lines, line(loc, res.IsError, texts))
	}
	return lines, cs.Close()
}

func runMCPGo(ctx context.Context, r io.ReadCloser, w io.WriteCloser, o ClientOptions) ([]string, error) {
	defer r.Close() // the mcp-go transport closes only w
	r = quietReader{r}
	var copts []mcpgoclient.ClientOption
	if o.ProtocolVersion != "" {
		copts = append(copts, mcpgoclient.WithProtocolVersion(o.ProtocolVersion))
	}
	c := mcpgoclient.NewClient(mcpgotransport.NewIO(r, w, nil), copts...)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("weather client: start: %w", err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ProtocolVersion = o.ProtocolVersion
	init.Params.ClientInfo = mcpgo.Implementation{Name: "weather-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("weather client: initialize: %w", err)
	}
	var lines []string
	for _, loc := range Locations {
		var req mcpgo.CallToolRequest
		req.Params.Name = ToolName
		req.Params.Arguments = map[string]any{"location": loc}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return lines, fmt.Errorf("weather client: %s(%s): %w", ToolName, loc, err)
		}
		var texts []string
		for _, content := range res.Content {
			if tc, ok := mcpgo.AsTextContent(content); ok {
				texts = append(texts, tc.Text)
			}
		}
		lines = append(lines, line(loc, res.IsError, texts))
	}
	return lines, c.Close()
}

// quietReader reports a read on a closed io.Pipe as EOF: the mcp-go stdio
// transport logs any other read error through slog.Default when the client
// closes, and NewIO offers no way to change its logger.
type quietReader struct{ io.ReadCloser }

func (r quietReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if errors.Is(err, io.ErrClosedPipe) {
		err = io.EOF
	}
	return n, err
}
