package replayer_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/replayer"
)

// A 2026-07-28 client that declares no elicitation capability is not sent
// the recorded elicitation of a multi round-trip call: it gets -32021, as
// from a server that checks the per-request capabilities (stdio and HTTP,
// where the status is 400); a client that declares it gets the recording.
func TestMissingClientCapability(t *testing.T) {
	c, _ := recordProtocol(t, 0, "2026-07-28")
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, transport := range []string{"stdio", "http"} {
		// No ElicitationHandler: the client's _meta declares sampling and
		// roots only.
		cl := mcp.NewClient(&mcp.Implementation{Name: "no-elicitation", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
			},
		})
		var tr mcp.Transport
		if transport == "stdio" {
			clientR, clientW, serverR, serverW := pipePair()
			go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
			defer clientW.Close()
			tr = &mcp.IOTransport{Reader: clientR, Writer: clientW}
		} else {
			tr = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
		}
		cs, err := cl.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mrtr"})
		if err == nil || !strings.Contains(err.Error(), "requires the elicitation capability") || transport == "http" && !strings.Contains(err.Error(), "Bad Request") {
			t.Errorf("%s: mrtr without the elicitation capability: %v", transport, err)
		}
		// A call that needs nothing still answers as recorded.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "progress"})
		if err != nil || res.Content[0].(*mcp.TextContent).Text != "progressed" {
			t.Errorf("%s: progress: %v %v", transport, err, res)
		}
		cs.Close()
	}
	// With the capability, the same call replays its two rounds.
	got, err := replayStreamable(t, c, nil, "2026-07-28")
	if err != nil || !slices_contains(got, "mrtr two rounds, octocat") {
		t.Errorf("with the capability: %v %q", err, got)
	}
}

// The error on the wire: code, and the missing capabilities as data (a
// client that declares URL elicitation only lacks form mode).
func TestMissingClientCapabilityWire(t *testing.T) {
	c, _ := recordProtocol(t, 0, "2026-07-28")
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for caps, want := range map[string]string{
		`{"elicitation":{"url":{}}}`: `"requiredCapabilities":{"elicitation":{"form":{}}}`,
		`{}`:                         `"requiredCapabilities":{"elicitation":{}}`,
		`{"elicitation":{}}`:         "",
	} {
		answer := serveLines(t, e).call(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mrtr","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`)
		switch {
		case want == "" && strings.Contains(answer, "-32021"):
			t.Errorf("%s: %s", caps, answer)
		case want == "" && !strings.Contains(answer, "input_required"):
			t.Errorf("%s: want the recorded input_required, got %s", caps, answer)
		case want != "" && (!strings.Contains(answer, `"code":-32021`) || !strings.Contains(answer, want)):
			t.Errorf("%s: got %s, want %s", caps, answer, want)
		}
	}
}
