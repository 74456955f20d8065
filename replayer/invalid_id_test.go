package replayer

import (
	"encoding/json"
	"testing"
)

// invalidWithID are invalid requests whose id can be read: every
// transport answers them -32600 under that id (invalidID).
var invalidWithID = []struct{ name, line string }{
	{"a method that is no string", `{"jsonrpc":"2.0","id":7,"method":5}`},
	{"a method that is no string, before the id", `{"method":5,"id":7,"jsonrpc":"2.0"}`},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`},
	{"a jsonrpc that is no string", `{"id":7,"jsonrpc":2,"method":"ping"}`},
	{"no method", `{"jsonrpc":"2.0","id":7}`},
}

// answerID is the code and id of a JSON-RPC error answer.
func answerID(t *testing.T, body string) (int, string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %q", body)
	}
	return m.Error.Code, string(m.ID)
}

func TestInvalidRequestKeepsItsID(t *testing.T) {
	srv, _ := serveHTTP(t, catalogueCassette, nil)
	u := srv.URL + "/mcp"
	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", init.status, init.body)
	}
	for _, tc := range invalidWithID {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, "POST", u, tc.line, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
			if code, id := answerID(t, got.body); got.status != 400 || code != -32600 || id != "7" {
				t.Errorf("HTTP: %d, error %d id %s; want 400, error -32600 id 7", got.status, code, id)
			}
			w, _ := serveCassette(t, catalogueCassette, nil)
			w.send(tc.line)
			if code, id := answerID(t, recvLine(t, w)); code != -32600 || id != "7" {
				t.Errorf("stdio: error %d id %s; want error -32600 id 7", code, id)
			}
		})
	}
}
