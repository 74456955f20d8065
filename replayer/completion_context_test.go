package replayer_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// completionCassette is a completion/complete recorded from a client that
// sends no "context" (the TypeScript SDK's).
const completionCassette = `{"version":1,"meta":{},"interactions":[
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ts","version":"1"}}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"completions":{},"prompts":{}},"serverInfo":{"name":"s","version":"1"}}}}},
{"from":"client","atMs":0,"notification":{"jsonrpc":"2.0","method":"notifications/initialized"}},
{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"complex_prompt"},"argument":{"name":"temperature","value":"1"}}},
 "response":{"from":"server","atMs":0,"message":{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["1","1.5"],"total":2,"hasMore":false}}}}}
]}`

// An mcp-go client sends "context": {} on completion/complete; the
// recording without it answers, over stdio and Streamable HTTP.
func TestCompletionContextEmptyReplaysToMCPGo(t *testing.T) {
	c, err := cassettes.Parse("complete.json", []byte(completionCassette))
	if err != nil {
		t.Fatal(err)
	}
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	complete := func(t *testing.T, ctx context.Context, cl *mgclient.Client) {
		t.Helper()
		defer cl.Close()
		if err := cl.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var init mgmcp.InitializeRequest
		init.Params.ProtocolVersion = "2025-11-25"
		init.Params.ClientInfo = mgmcp.Implementation{Name: "mcpgo-client", Version: "1"}
		if _, err := cl.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		var req mgmcp.CompleteRequest
		req.Params.Ref = mgmcp.PromptReference{Type: "ref/prompt", Name: "complex_prompt"}
		req.Params.Argument = mgmcp.CompleteArgument{Name: "temperature", Value: "1"}
		res, err := cl.Complete(ctx, req)
		if err != nil {
			t.Fatalf("completion/complete: %v", err)
		}
		if got := strings.Join(res.Completion.Values, ","); got != "1,1.5" {
			t.Errorf("values %q, want 1,1.5", got)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		clientR, clientW, serverR, serverW := pipePair()
		done := make(chan struct{})
		go func() { defer close(done); e.Serve(ctx, serverR, serverW); serverW.Close() }()
		complete(t, ctx, mgclient.NewClient(mgtransport.NewIO(clientR, clientW, nil)))
		clientR.Close()
		cancel()
		<-done
	})
	t.Run("http", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		srv := httptest.NewServer(e.Handler(nil))
		t.Cleanup(srv.Close)
		tr, err := mgtransport.NewStreamableHTTP(srv.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		complete(t, ctx, mgclient.NewClient(tr))
	})
}
