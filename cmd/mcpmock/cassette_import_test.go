package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// importData is where the captures of other tools are (PROVENANCE.md).
const importData = "../../cassettes/testdata/import"

// importCall is a tool call and what the client must get back.
type importCall struct {
	tool    string
	args    map[string]any
	text    string
	isError bool
}

var weatherCalls = []importCall{
	{"get_weather", map[string]any{"location": "New York"}, "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy", false},
	{"get_weather", map[string]any{"location": "London"}, "Current weather in London:\nTemperature: 72°F\nConditions: Partly cloudy", false},
	{"get_weather", map[string]any{"location": "Atlantis"}, "Failed to fetch weather data: API rate limit exceeded", true},
}

var echoCalls = []importCall{
	{"echo", map[string]any{"message": "hello"}, "hello", false},
	{"echo", map[string]any{"message": "hello"}, "hello", false},
	{"echo", map[string]any{"message": "hello"}, "hello", false},
	{"get_weather", map[string]any{"location": "Paris"}, "Paris weather: 22C, cloudy", false},
	{"get_weather", map[string]any{"location": "Paris"}, "Paris weather: 22C, cloudy", false},
}

// importCLI runs "mcpmock cassette import" and returns its stderr; it fails
// the test when the status is not want.
func importCLI(t *testing.T, want int, args ...string) string {
	t.Helper()
	cmd := exec.Command("mcpmock", append([]string{"cassette", "import"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("mcpmock cassette import %s: exit status %d, want %d; stderr:\n%s", strings.Join(args, " "), got, want, stderr.String())
	}
	return stderr.String()
}

// TestImportReplaysToClients imports each real capture (the mcpsnoop
// traces of the weather example, their line logs, mitmproxy's HAR), lints
// the cassette, and replays it to go-sdk and mcp-go clients over stdio and
// Streamable HTTP at their default protocol (2026-07-28 first, falling back
// to initialize on a stateful recording): each gets the recorded results.
func TestImportReplaysToClients(t *testing.T) {
	captures := []struct {
		file, format string
		calls        []importCall
		// stateful: recorded with initialize only, so that a client at
		// its default protocol misses with its server/discover probe
		// (answered -32601, as a stateful server does) before it falls
		// back: replay then exits 1 unless --allow-misses.
		stateful bool
	}{
		{"mcpsnoop-weather-stdio-2025-11-25.jsonl", "mcpsnoop", weatherCalls, true},
		{"mcpsnoop-weather-stdio-2026-07-28.jsonl", "mcpsnoop", weatherCalls, false},
		{"weather-stdio-2025-11-25.lines", "lines", weatherCalls, true},
		{"weather-stdio-2026-07-28.lines", "lines", weatherCalls, false},
		{"mitmproxy-echo-stateless-2026-07-28.har", "har", echoCalls, false},
	}
	for _, capture := range captures {
		t.Run(capture.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "imported.json")
			importCLI(t, 0, "--from", capture.format, filepath.Join(importData, capture.file), "-c", path)
			problems, c := lintCassette(path, nil)
			for _, p := range problems {
				if p.Severity == cassettes.SeverityError {
					t.Errorf("lint: %s", p.Message)
				}
			}
			if c == nil {
				t.Fatal("the cassette does not load")
			}
			replay := []string{"replay", "-c", path}
			if capture.stateful {
				replay = append(replay, "--allow-misses")
				t.Run("gosdk-2025-11-25/stdio", func(t *testing.T) {
					p := start(t, "replay", "-c", path)
					importCalls(t, importGoSDK(t, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, "2025-11-25"), capture.calls)
					p.stdin.Close()
					if status := p.wait(t); status != 0 {
						t.Fatalf("replay exit status %d", status)
					}
				})
			}
			for _, client := range []string{"gosdk", "mcpgo"} {
				t.Run(client+"/stdio", func(t *testing.T) {
					p := start(t, replay...)
					importCalls(t, importStdioClient(t, client, p), capture.calls)
					p.stdin.Close()
					if status := p.wait(t); status != 0 {
						t.Fatalf("replay exit status %d", status)
					}
				})
				t.Run(client+"/http", func(t *testing.T) {
					_, url := startListening(t, append(replay, "--listen", "127.0.0.1:0")...)
					importCalls(t, importHTTPClient(t, client, url), capture.calls)
				})
			}
		})
	}
}

// importCalls makes the calls and checks what came back.
func importCalls(t *testing.T, call func(ctx context.Context, tool string, args map[string]any) (string, bool, error), calls []importCall) {
	t.Helper()
	for i, c := range calls {
		text, isError, err := call(testContext(t), c.tool, c.args)
		if err != nil {
			t.Fatalf("call %d (%s %v): %v", i+1, c.tool, c.args, err)
		}
		if text != c.text || isError != c.isError {
			t.Errorf("call %d (%s %v) = %q (isError %v), want %q (isError %v)", i+1, c.tool, c.args, text, isError, c.text, c.isError)
		}
	}
}

type importCaller = func(ctx context.Context, tool string, args map[string]any) (string, bool, error)

func importStdioClient(t *testing.T, lib string, p *proc) importCaller {
	t.Helper()
	if lib == "gosdk" {
		return importGoSDK(t, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, "")
	}
	return importMCPGo(t, mcpgoclient.NewClient(mcpgotransport.NewIO(p.stdout, p.stdin, nil)))
}

func importHTTPClient(t *testing.T, lib, url string) importCaller {
	t.Helper()
	if lib == "gosdk" {
		return importGoSDK(t, &mcp.StreamableClientTransport{Endpoint: url}, "")
	}
	c, err := mcpgoclient.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	return importMCPGo(t, c)
}

// importGoSDK connects a go-sdk client asking for a protocol version; ""
// is its default.
func importGoSDK(t *testing.T, tr mcp.Transport, version string) importCaller {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "import-test", Version: "1"}, nil).Connect(testContext(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return func(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "", false, err
		}
		if len(res.Content) != 1 {
			return "", false, fmt.Errorf("%d content items, want 1", len(res.Content))
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return "", false, fmt.Errorf("content %T, want text", res.Content[0])
		}
		return tc.Text, res.IsError, nil
	}
}

// importMCPGo starts and initializes an mcp-go client at its default
// protocol.
func importMCPGo(t *testing.T, c *mcpgoclient.Client) importCaller {
	t.Helper()
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "import-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return func(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
		var req mcpgo.CallToolRequest
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", false, err
		}
		if len(res.Content) != 1 {
			return "", false, fmt.Errorf("%d content items, want 1", len(res.Content))
		}
		tc, ok := res.Content[0].(mcpgo.TextContent)
		if !ok {
			return "", false, fmt.Errorf("content %T, want text", res.Content[0])
		}
		return tc.Text, res.IsError, nil
	}
}

// TestImportRefusesToOverwrite: an existing cassette is kept unless
// --force, and a capture that does not import writes nothing.
func TestImportRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(importData, "weather-stdio-2025-11-25.lines")
	stderr := importCLI(t, 1, "--from", "lines", src, "-c", path)
	if !strings.Contains(stderr, "--force") {
		t.Errorf("stderr does not say --force:\n%s", stderr)
	}
	if data, _ := os.ReadFile(path); string(data) != "keep me" {
		t.Fatalf("the cassette was changed without --force: %q", data)
	}
	bad := filepath.Join(dir, "bad.lines")
	if err := os.WriteFile(bad, []byte("> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n<{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr = importCLI(t, 1, "--from", "lines", bad, "-c", path, "--force")
	if !strings.Contains(stderr, "line 2") {
		t.Errorf("the error does not name line 2:\n%s", stderr)
	}
	if data, _ := os.ReadFile(path); string(data) != "keep me" {
		t.Fatalf("a failed import changed the cassette: %q", data)
	}
	importCLI(t, 0, "--from", "lines", src, "-c", path, "--force")
	if _, err := cassettes.Load(path); err != nil {
		t.Fatalf("after --force: %v", err)
	}
}

// TestImportRedactsAsRecord: the default rules and record's --redact-*
// flags apply to an imported cassette, in messages, headers and URLs, and
// --keep-timing keeps the capture's time offsets as record keeps its own.
func TestImportRedactsAsRecord(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "secret.lines")
	if err := os.WriteFile(lines, []byte(`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"api_key":"sk-live-0123456789","q":"hush-hush"}}}`+"\n"+
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"you said hush-hush"}]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lines.json")
	importCLI(t, 0, "--from", "lines", lines, "-c", out, "--redact-value", "hush-hush")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-live-0123456789", "hush-hush"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the cassette holds %q:\n%s", secret, data)
		}
	}
	har := filepath.Join(dir, "secret.har")
	entry := `{"startedDateTime":"2026-01-01T00:00:00Z","time":1,"request":{"method":"POST","url":"http://127.0.0.1:9/mcp?api_key=k3y-in-url",` +
		`"headers":[{"name":"Authorization","value":"Bearer tok-in-header"},{"name":"Content-Type","value":"application/json"}],` +
		`"postData":{"mimeType":"application/json","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}},` +
		`"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"},{"name":"Set-Cookie","value":"sid=cookie-value"}],` +
		`"content":{"mimeType":"application/json","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}},"timings":{"send":0,"wait":1,"receive":0}}`
	if err := os.WriteFile(har, []byte(`{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[`+entry+`]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "har.json")
	importCLI(t, 0, "--from", "har", har, "-c", out)
	c, err := cassettes.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Interactions[0].HTTP
	if h == nil || h.RequestHeaders["Authorization"] != cassettes.Redacted || h.ResponseHeaders["Set-Cookie"] != cassettes.Redacted || h.URL != "/mcp?api_key="+cassettes.Redacted {
		t.Errorf("http = %+v", h)
	}
	data, _ = os.ReadFile(out)
	for _, secret := range []string{"k3y-in-url", "tok-in-header", "cookie-value"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the cassette holds %q", secret)
		}
	}

	snoop := filepath.Join(importData, "mcpsnoop-weather-stdio-2025-11-25.jsonl")
	for _, keep := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("timing-%v.json", keep))
		args := []string{"--from", "mcpsnoop", snoop, "-c", out}
		if keep {
			args = append(args, "--keep-timing")
		}
		importCLI(t, 0, args...)
		c, err := cassettes.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		// The last answer came 13.0 ms after mcpsnoop's meta line.
		last := c.Interactions[len(c.Interactions)-1].Response.AtMs
		if got := last > 12 && last < 14; got != keep {
			t.Errorf("--keep-timing %v: the last answer at %v ms", keep, last)
		}
	}
}
