package replayer

import (
	"net/http"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// TestClientHeadersPassServerCheck checks that the headers mcpmock's HTTP
// clients set (the tap's bridge, new-episodes, cassette verify) pass the
// replay server's Server Validation: both sides read Mcp-Name from the same
// member. Before they shared a table, a resources/read with a name beside
// its uri went out as Mcp-Name: <name> and was refused with -32020.
func TestClientHeadersPassServerCheck(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	tests := []struct{ name, msg string }{
		{"tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather",` + meta + `}}`},
		{"tool, non-ASCII name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"météo",` + meta + `}}`},
		{"prompt, sentinel-like name", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"=?base64?x?=",` + meta + `}}`},
		{"resource", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a b.txt",` + meta + `}}`},
		{"resource with a name", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"name":"readme","uri":"file:///README",` + meta + `}}`},
		{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := jsonrpc.Parse([]byte(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			mcp.SetRequestHeaders(h, msg, "")
			if status, code, text, _ := checkHeaders(h, msg, mcp.ReadParams(msg.Params)); status != 0 {
				t.Errorf("the replay server refused the client's headers %v: %d %d %s", h, status, code, text)
			}
		})
	}
}
