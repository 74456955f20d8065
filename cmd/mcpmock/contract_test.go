package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// Issue 23, part 4: the tap's protocol-contract checks, from outside,
// through the binary with real peers (docs/contract.md).

// contractOfReport reads the contract warnings of the --report file of a
// record: the first cassette's contract array and the totals' count.
func contractOfReport(t *testing.T, path string) ([]contractReport, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep runReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	if len(rep.Cassettes) != 1 || rep.Cassettes[0].Contract == nil || !bytes.Contains(data, []byte(`"contract": [`)) {
		t.Fatalf("the report has no contract array:\n%s", data)
	}
	if rep.Totals.ContractWarnings != rep.Cassettes[0].ContractWarnings {
		t.Errorf("totals %d, cassette %d", rep.Totals.ContractWarnings, rep.Cassettes[0].ContractWarnings)
	}
	return rep.Cassettes[0].Contract, rep.Totals.ContractWarnings
}

// checkNoContractWarnings fails the test if a recording's report or
// stderr holds a contract warning.
func checkNoContractWarnings(t *testing.T, report, stderr string) {
	t.Helper()
	ws, n := contractOfReport(t, report)
	if n != 0 || len(ws) != 0 {
		t.Errorf("%d contract warnings on clean traffic: %+v", n, ws)
	}
	if strings.Contains(stderr, "⚠ contract") || !strings.Contains(stderr, "0 contract warnings") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// mrtrServer is a real mcp-go server of the 2026-07-28 era whose tool
// deploy answers with an input_required result carrying a requestState
// (mcp-go's own example, examples/multi_round_trip), served stateless
// over Streamable HTTP; on the retry it says which state it got.
func mrtrServer(t *testing.T) string {
	t.Helper()
	srv := server.NewMCPServer("deploy-server", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation())
	srv.AddTool(mcpgo.NewTool("deploy", mcpgo.WithString("environment", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if answer := server.ElicitationResponse(req.Params.InputResponses, "confirm"); answer != nil {
				return mcpgo.NewToolResultText("deployed with state " + req.Params.RequestState), nil
			}
			return server.NewInputRequestBuilder("env="+req.GetString("environment", "staging")).
				Elicit("confirm", mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: "Deploy?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"approve": map[string]any{"type": "boolean"}}}}).
				ToolResult(), nil
		})
	s := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true)))
	t.Cleanup(s.Close)
	return s.URL + "/mcp"
}

// post sends one 2026-07-28 message to url with the standard headers (each
// of hdr replaces one; "" removes it) and returns the status and body.
func post(t *testing.T, url, method, name, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// nameTamperer sets a wrong Mcp-Name on every tools/call that a real
// client sends.
type nameTamperer struct{ base http.RoundTripper }

func (n nameTamperer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Method") == "tools/call" {
		r = r.Clone(r.Context())
		r.Header.Set("Mcp-Name", "not-the-tool")
	}
	return n.base.RoundTrip(r)
}

// TestContractTamperingFlagged: through the HTTP tap of mcpmock record,
// against a real 2026-07-28 mcp-go server that sends requestState, a raw
// client that echoes a changed requestState and one whose Mcp-Name
// disagrees with its body, and a go-sdk client whose transport puts a wrong
// Mcp-Name on its tools/call, are each flagged: a Warn line in the live
// log, an entry of the report's contract array, the count in the summary.
// The traffic is not changed: the server gets the tampered requests and
// answers them as it does.
func TestContractTamperingFlagged(t *testing.T) {
	up := mrtrServer(t)
	dir := t.TempDir()
	path, report := filepath.Join(dir, "c.json"), filepath.Join(dir, "report.json")
	p, url := startListening(t, "record", "-c", path, "--report", report, "--upstream", up, "--listen", "127.0.0.1:0")

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta2026 + `,"name":"deploy","arguments":{"environment":"prod"}}}`
	status, body := post(t, url, "tools/call", "deploy", call, nil)
	if status != http.StatusOK || !strings.Contains(body, `"requestState":"env=prod"`) {
		t.Fatalf("first call: %d %s", status, body)
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta2026 + `,"name":"deploy","arguments":{"environment":"prod"},"inputResponses":{"confirm":{"action":"accept","content":{"approve":true}}},"requestState":"env=admin"}}`
	if status, body = post(t, url, "tools/call", "deploy", retry, nil); status != http.StatusOK || !strings.Contains(body, "deployed with state env=admin") {
		t.Fatalf("tampered retry: the server did not get it as sent: %d %s", status, body)
	}
	wrongName := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta2026 + `,"name":"deploy","arguments":{"environment":"prod"}}}`
	status, body = post(t, url, "tools/call", "delete_everything", wrongName, nil)
	if !strings.Contains(body, "-32020") {
		t.Errorf("the server did not refuse the header mismatch itself: %d %s", status, body)
	}

	// A go-sdk client whose tools/call carries a wrong Mcp-Name.
	cl := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-tamperer", Version: "1"}, nil)
	cs, err := cl.Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: nameTamperer{http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("go-sdk client: %v", err)
	}
	if _, err := cs.ListTools(testContext(t), nil); err != nil {
		t.Fatalf("go-sdk tools/list: %v", err)
	}
	if _, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"environment": "x"}}); err == nil {
		t.Errorf("go-sdk tools/call with a wrong Mcp-Name: the server did not refuse it")
	}
	cs.Close()

	if status := stopAndWait(t, p); status != 0 {
		t.Fatalf("record exited with %d", status)
	}
	ws, n := contractOfReport(t, report)
	type got struct{ kind, id, detail string }
	want := []got{
		{"requestState", "2", `the requestState of tools/call "deploy" was changed: the server sent "env=prod", the client echoed "env=admin"`},
		{"headers", "3", `the Mcp-Name header says "delete_everything" but the body's params.name is "deploy"`},
		{"headers", "", `the Mcp-Name header says "not-the-tool" but the body's params.name is "deploy"`},
	}
	if n != len(want) || len(ws) != len(want) {
		t.Fatalf("%d warnings, want %d: %+v\nstderr:\n%s", n, len(want), ws, p.stderr)
	}
	for i, w := range want {
		g := ws[i]
		if g.Kind != w.kind || (w.id != "" && string(g.ID) != w.id) || g.Detail != w.detail || g.From != "client" || g.Method != "tools/call" || g.Message == 0 {
			t.Errorf("warning %d = %+v, want %+v", i, g, w)
		}
		line := "⚠ contract " + w.kind + ": " + w.detail
		if !strings.Contains(p.stderr.String(), line) {
			t.Errorf("the live log has no line %q:\n%s", line, p.stderr)
		}
	}
	if !strings.Contains(p.stderr.String(), "3 contract warnings)") {
		t.Errorf("the summary does not count them:\n%s", p.stderr)
	}
}

// TestContractCleanSessions: real sessions of go-sdk and mcp-go clients
// and servers, in both eras, through every pairing of the tap (stdio,
// HTTP, both bridges), the look-alikes of server-everything through the
// stdio and HTTP taps, and mcp-go's own multi round-trip client echoing
// requestState as it should, give no contract warning.
func TestContractCleanSessions(t *testing.T) {
	record := func(t *testing.T, args ...string) (string, []string) {
		dir := t.TempDir()
		path, report := filepath.Join(dir, "c.json"), filepath.Join(dir, "report.json")
		return report, append([]string{"record", "-c", path, "--report", report}, args...)
	}

	for _, server := range []string{testpeer.GoSDK, testpeer.MCPGo} {
		for _, library := range []string{"go-sdk", "mcp-go"} {
			for _, protocol := range []string{"", "2025-11-25", "2025-03-26"} {
				t.Run(fmt.Sprintf("stdio/%s-server/%s-client/%q", server, library, protocol), func(t *testing.T) {
					t.Parallel()
					report, args := record(t, append([]string{"--"}, peerCommand(server)...)...)
					p := start(t, args...)
					session(t, p, library, protocol)
					p.stdin.Close()
					if status := p.wait(t); status != 0 {
						t.Fatalf("record exited with %d", status)
					}
					checkNoContractWarnings(t, report, p.stderr.String())
				})
			}
		}
	}
	httpRuns := []struct {
		server, library, protocol string
		opts                      testpeer.HTTPServerOptions
		sse                       bool // the HTTP+SSE transport of 2024-11-05
	}{
		{testpeer.GoSDK, "go-sdk", "", testpeer.HTTPServerOptions{}, false},
		{testpeer.GoSDK, "go-sdk", "2025-11-25", testpeer.HTTPServerOptions{JSONResponse: true}, false},
		{testpeer.GoSDK, "mcp-go", "2025-11-25", testpeer.HTTPServerOptions{}, false},
		{testpeer.MCPGo, "go-sdk", "", testpeer.HTTPServerOptions{}, false},
		{testpeer.MCPGo, "mcp-go", "", testpeer.HTTPServerOptions{Stateless: true}, false},
		{testpeer.MCPGo, "mcp-go", "2025-06-18", testpeer.HTTPServerOptions{}, false},
		{testpeer.GoSDK, "go-sdk", "", testpeer.HTTPServerOptions{}, true},
		{testpeer.MCPGo, "go-sdk", "", testpeer.HTTPServerOptions{}, true},
	}
	for _, r := range httpRuns {
		t.Run(fmt.Sprintf("http/%s-server/%s-client/%q/%+v/sse=%v", r.server, r.library, r.protocol, r.opts, r.sse), func(t *testing.T) {
			t.Parallel()
			up, path := httpUpstream(t, r.server, r.opts), "/mcp"
			if r.sse {
				path = "/sse"
			}
			report, args := record(t, "--upstream", up+path, "--listen", "127.0.0.1:0")
			p, url := startListening(t, args...)
			url = strings.TrimSuffix(url, "/mcp") + path
			run := map[string]func(context.Context, string, testpeer.HTTPOptions) (testpeer.Transcript, error){
				"go-sdk": testpeer.RunGoSDKHTTP, "mcp-go": testpeer.RunMCPGoHTTP}[r.library]
			if _, err := run(testContext(t), url, testpeer.HTTPOptions{SSE: r.sse, ClientOptions: testpeer.ClientOptions{ProtocolVersion: r.protocol}}); err != nil {
				t.Fatalf("client: %v", err)
			}
			if status := stopAndWait(t, p); status != 0 {
				t.Fatalf("record exited with %d", status)
			}
			checkNoContractWarnings(t, report, p.stderr.String())
		})
	}
	t.Run("bridge/stdio-client-to-http-server", func(t *testing.T) {
		t.Parallel()
		up := httpUpstream(t, testpeer.MCPGo, testpeer.HTTPServerOptions{})
		report, args := record(t, "--upstream", up+"/mcp")
		p := start(t, args...)
		session(t, p, "go-sdk", "")
		p.stdin.Close()
		if status := p.wait(t); status != 0 {
			t.Fatalf("record exited with %d", status)
		}
		checkNoContractWarnings(t, report, p.stderr.String())
	})
	t.Run("bridge/http-client-to-stdio-server", func(t *testing.T) {
		t.Parallel()
		report, args := record(t, append([]string{"--listen", "127.0.0.1:0", "--"}, peerCommand(testpeer.GoSDK)...)...)
		p, url := startListening(t, args...)
		if _, err := testpeer.RunGoSDKHTTP(testContext(t), url, testpeer.HTTPOptions{}); err != nil {
			t.Fatal(err)
		}
		if status := stopAndWait(t, p); status != 0 {
			t.Fatalf("record exited with %d", status)
		}
		checkNoContractWarnings(t, report, p.stderr.String())
	})
	for _, kind := range testpeer.EverythingKinds {
		for _, over := range []string{"stdio", "http"} {
			t.Run("everything/"+kind+"/"+over, func(t *testing.T) {
				t.Parallel()
				_, run := recordEverything(t, kind, over)
				if strings.Contains(run.stderr, "⚠ contract") || !strings.Contains(run.stderr, "0 contract warnings") {
					t.Errorf("stderr:\n%s", run.stderr)
				}
			})
		}
	}
	t.Run("mrtr/mcp-go-client-echoes-requestState", func(t *testing.T) {
		t.Parallel()
		up := mrtrServer(t)
		report, args := record(t, "--upstream", up, "--listen", "127.0.0.1:0")
		p, url := startListening(t, args...)
		tr, err := mcpgotransport.NewStreamableHTTP(url)
		if err != nil {
			t.Fatal(err)
		}
		c := mcpgoclient.NewClient(tr, mcpgoclient.WithElicitationHandler(approver{}))
		if err := c.Start(testContext(t)); err != nil {
			t.Fatal(err)
		}
		var init mcpgo.InitializeRequest
		init.Params.ClientInfo = mcpgo.Implementation{Name: "mrtr", Version: "1"}
		if _, err := c.Initialize(testContext(t), init); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		var call mcpgo.CallToolRequest
		call.Params.Name = "deploy"
		call.Params.Arguments = map[string]any{"environment": "prod"}
		res, err := c.CallTool(testContext(t), call)
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		if text := res.Content[0].(mcpgo.TextContent).Text; text != "deployed with state env=prod" {
			t.Errorf("tools/call: %q", text)
		}
		c.Close()
		if status := stopAndWait(t, p); status != 0 {
			t.Fatalf("record exited with %d", status)
		}
		checkNoContractWarnings(t, report, p.stderr.String())
		// The round trip went through the tap: the state out and back.
		data, err := os.ReadFile(filepath.Join(filepath.Dir(report), "c.json"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), `"requestState": "env=prod"`); n != 2 {
			t.Errorf("the cassette holds the requestState %d times, want 2 (the result and the retry):\n%s", n, data)
		}
	})
}

// approver accepts every elicitation with approve: true.
type approver struct{}

func (approver) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: mcpgo.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}, nil
}
