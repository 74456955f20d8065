package replayer

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Mcp-Param-* headers of 2026-07-28, checked against the x-mcp-header
// marks of the called tool's recorded inputSchema as go-sdk's server checks
// them.
func TestStatelessParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"query":{"type":"string"},` +
		`"limit":{"type":"integer","x-mcp-header":"Limit"},` +
		`"dryRun":{"type":["boolean","null"],"x-mcp-header":"DryRun"},` +
		`"options":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}},` +
		`"required":["region","query"]}`
	list := `{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":1,"method":"tools/list"},` +
		`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
		`{"name":"execute_sql","inputSchema":` + schema + `},{"name":"echo","inputSchema":{"type":"object"}}]}}}}`
	args := `{"region":"us-west1","query":"SELECT 1","limit":42,"dryRun":true,"options":{"zone":"Hello, 世界"}}`
	srv, _ := serveHTTP(t, cassette(list,
		call(2, "execute_sql", args, text("rows")),
		call(3, "echo", `{"text":"hi"}`, text("hi"))), nil)
	u := srv.URL + "/mcp"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	body := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + meta + `}}`
	}
	good := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql",
		"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "42", "Mcp-Param-DryRun": "true", "Mcp-Param-Zone": "=?base64?SGVsbG8sIOS4lueVjA==?="}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	noDryRun := strings.Replace(args, `"dryRun":true,`, ``, 1)
	nullDryRun := strings.Replace(args, `"dryRun":true`, `"dryRun":null`, 1)
	tests := []struct {
		name     string
		body     string
		header   map[string]string
		mismatch bool // want 400 with -32020
	}{
		{"all headers", body("execute_sql", args), good, false},
		{"integer compared as a number", body("execute_sql", args), with("Mcp-Param-Limit", "42.0"), false},
		{"missing header", body("execute_sql", args), with("Mcp-Param-Region", ""), true},
		{"missing nested header", body("execute_sql", args), with("Mcp-Param-Zone", ""), true},
		{"value mismatch", body("execute_sql", args), with("Mcp-Param-Region", "eu-west1"), true},
		{"integer mismatch", body("execute_sql", args), with("Mcp-Param-Limit", "43"), true},
		{"not an integer", body("execute_sql", args), with("Mcp-Param-Limit", "42.5"), true},
		{"boolean is lower case", body("execute_sql", args), with("Mcp-Param-DryRun", "True"), true},
		{"encoded value mismatch", body("execute_sql", args), with("Mcp-Param-Zone", "=?base64?SGVsbG8=?="), true},
		{"bad Base64", body("execute_sql", args), with("Mcp-Param-Zone", "=?base64?***?="), true},
		{"non-ASCII not encoded", body("execute_sql", args), with("Mcp-Param-Zone", "Hello, \xe4\xb8\x96"), true},
		{"header for an absent parameter", body("execute_sql", noDryRun), good, true},
		{"header for a null parameter", body("execute_sql", nullDryRun), good, true},
		{"absent parameter, no header", body("execute_sql", noDryRun), with("Mcp-Param-DryRun", ""), false},
		{"null parameter, no header", body("execute_sql", nullDryRun), with("Mcp-Param-DryRun", ""), false},
		{"a tool without marks", body("echo", `{"text":"hi"}`), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}, false},
		{"an unmarked Mcp-Param header is ignored", body("echo", `{"text":"hi"}`), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo", "Mcp-Param-Other": "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, "POST", u, tt.body, tt.header)
			var m struct {
				Error *struct {
					Code    int
					Message string
				} `json:"error"`
			}
			json.Unmarshal([]byte(got.body), &m)
			isMismatch := got.status == 400 && m.Error != nil && m.Error.Code == CodeHeaderMismatch
			if isMismatch != tt.mismatch {
				t.Errorf("%d %s: want header mismatch %v", got.status, got.body, tt.mismatch)
			}
			if tt.mismatch && !strings.Contains(m.Error.Message, "Mcp-Param-") {
				t.Errorf("the error %q does not name the header", m.Error.Message)
			}
			if !tt.mismatch && tt.body == body("execute_sql", args) && (got.status != 200 || !strings.Contains(got.body, "rows")) {
				t.Errorf("%d %s: want the recorded answer", got.status, got.body)
			}
		})
	}
}
