package replayer_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestUpstreamHTTP2026: a request of the stateless era forwarded to a live
// HTTP server carries the headers that era requires (Mcp-Protocol-Version
// from its _meta, Mcp-Method, Mcp-Name), so the server answers it.
func TestUpstreamHTTP2026(t *testing.T) {
	h, err := testpeer.HTTPHandler(testpeer.GoSDK, testpeer.HTTPServerOptions{Stateless: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, err := replayer.DialUpstream(replayer.UpstreamOptions{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	req := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Oslo"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	in, err := u.Call(t.Context(), []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	if in.Response == nil || !strings.Contains(string(in.Response.Message), "Current weather in Oslo") {
		t.Fatalf("the live server answered %+v", in.Response)
	}
}
