package cassettes

import "testing"

// TestLintFindsSecretNamedMembers: a cassette written before the names
// github_token, api_token and token counted as secrets holds their values
// in clear; lint reports each as an error with its interaction and JSON
// path, and none of MCP's own members or token counts.
func TestLintFindsSecretNamedMembers(t *testing.T) {
	data := `{
  "version": 1,
  "interactions": [
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "deploy", "arguments": {"github_token": "plain-gh-0002", "repo": "x"}, "_meta": {"progressToken": "pt-1"}}},
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"usage": {"inputTokens": "10", "api_token": "plain-api-0003"}}}}}},
    {"from": "server", "atMs": 0, "request": {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": "100"}}},
    {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "a", "arguments": {"Token": "plain-tok-0001", "cursor": "c"}}},
     "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]}}}}
  ]
}
`
	problems, c := Lint("old.json", []byte(data), nil)
	if c == nil {
		t.Fatalf("no cassette: %v", problems)
	}
	wantProblems(t, problems, []string{
		"error: line 4, column 5: interaction 1: a secret at request params.arguments.github_token (member name github_token)",
		"error: line 4, column 5: interaction 1: a secret at response result.structuredContent.usage.api_token (member name api_token)",
		"error: line 8, column 5: interaction 3: a secret at request params.arguments.Token (member name Token)",
		"error: line 8, column 5: interaction 3: a secret at response result.content.0.text (pattern ",
	})
}
