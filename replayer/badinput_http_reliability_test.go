package replayer

import (
	"strings"
	"testing"
)

// httpCase is one bad POST in a live Streamable HTTP session and the
// answer it must get: a status and, when the body is a JSON-RPC error, its
// code (0: no JSON-RPC error body).
type httpCase struct {
	name        string
	body        string
	contentType string // "" is application/json
	accept      string // "" is "application/json, text/event-stream"; "-" none
	status      int
	code        int
}

func httpCatalogue() []httpCase {
	big := 1 << 20
	if *soak {
		big = 64 << 20
	}
	return []httpCase{
		{name: "a body that is not JSON", body: "hello, server", status: 400, code: -32700},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,"method":`, status: 400, code: -32700},
		{name: "binary garbage", body: "\x00\x01\x02\xfe\xff", status: 400, code: -32700},
		{name: "invalid request: no method", body: `{"jsonrpc":"2.0","id":2}`, status: 400, code: -32600},
		{name: "invalid request: not an object", body: `42`, status: 400, code: -32600},
		{name: "wrong jsonrpc version", body: `{"jsonrpc":"1.0","id":4,"method":"ping"}`, status: 400, code: -32600},
		{name: "id of the wrong type", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, status: 400, code: -32600},
		{name: "invalid UTF-8 in a string", body: "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\"}}}", status: 200, code: CodeNoMatch},
		{name: "a response to nothing", body: `{"jsonrpc":"2.0","id":77,"result":{}}`, status: 202},
		// As the go-sdk server answers it: 400 with a text body.
		{name: "a batch after 2025-03-26", body: `[{"jsonrpc":"2.0","id":10,"method":"ping"}]`, status: 400},
		{name: "an empty batch", body: `[]`, status: 400, code: -32600},
		{name: "an empty body", body: ``, status: 400, code: -32700},
		{name: "a wrong content type", body: goodCall, contentType: "text/plain", status: 415},
		{name: "a missing Accept", body: goodCall, accept: "-", status: 406},
		{name: "an Accept without event streams", body: goodCall, accept: "application/json", status: 406},
		{name: "a body past the limit", body: bigLine(big), status: 413},
	}
}

func TestBadInputHTTPReplay(t *testing.T) {
	// A limit of 1 MiB here, the 64 MiB default under -soak: the same code.
	limit := int64(1 << 20)
	if *soak {
		limit = 0
	}
	srv, _ := serveHTTP(t, catalogueCassette, &HTTPOptions{MaxBodyBytes: limit})
	u := srv.URL + "/mcp"
	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", init.status, init.body)
	}
	for _, tc := range httpCatalogue() {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			switch tc.accept {
			case "-":
				h["Accept"] = ""
			case "":
			default:
				h["Accept"] = tc.accept
			}
			got := do(t, "POST", u, tc.body, h)
			if got.status != tc.status {
				t.Errorf("status %d, want %d (body %.200q)", got.status, tc.status, got.body)
			}
			if tc.code != 0 {
				body := got.body
				if ev := events(body); len(ev) > 0 {
					body = ev[len(ev)-1]
				}
				if code := rpcError(t, body); code != tc.code {
					t.Errorf("JSON-RPC error %d, want %d", code, tc.code)
				}
			}
			// The session goes on.
			after := do(t, "POST", u, goodCall, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
			if after.status != 200 || !strings.Contains(after.body, `"hi"`) {
				t.Errorf("the next call: %d %.200q, want its recorded answer", after.status, after.body)
			}
		})
	}
}
