package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// secretArgs are tools/call arguments whose names say secret, each with a
// value that no pattern knows: only the name gives them away.
var secretArgs = map[string]string{
	"token":        "plain-tok-0001",
	"github_token": "plain-gh-0002",
	"api_token":    "plain-api-0003",
	"apiKey":       "plain-key-0004",
	"password":     "plain-pw-0005",
	"credentials":  "plain-cred-0006",
	"private_key":  "plain-pk-0007",
}

// secretArgsCall is a tools/call with secretArgs after a token count (first,
// so that the short arguments of the log show it) and a progress token,
// which are MCP's own and must be kept.
func secretArgsCall(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"pt-kept-1"},"name":"echo","arguments":{"maxTokens":"mt-kept-512","text":"hi"`)
	for k, v := range secretArgs {
		q, _ := json.Marshal(v)
		b.WriteString(`,"` + k + `":` + string(q))
	}
	b.WriteString("}}}")
	return b.String()
}

// TestSecretArgumentsNeverReachTheCassette records a tools/call with
// secret-named arguments through the stdio tap and the HTTP tap of the
// binary, to a real server, and checks that no value reaches the cassette
// or the live log, and that maxTokens and progressToken are kept.
func TestSecretArgumentsNeverReachTheCassette(t *testing.T) {
	for _, tap := range []string{"stdio", "http"} {
		t.Run(tap, func(t *testing.T) {
			path := tempCassette(t)
			var p *proc
			switch tap {
			case "stdio":
				p = start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDK)...)...)
				p.send(t, initReq)
				p.recv(t)
				p.send(t, initialized)
				p.send(t, secretArgsCall(t))
				p.recv(t)
				p.stdin.Close()
				if status := p.wait(t); status != 0 {
					t.Fatalf("exit status %d", status)
				}
			case "http":
				up := httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true})
				var u string
				p, u = startListening(t, "record", "-c", path, "--upstream", up+"/mcp", "--listen", "127.0.0.1:0")
				sid := ""
				for _, body := range []string{initReq, initialized, secretArgsCall(t)} {
					resp, _ := postJSON(t, u, sid, body)
					if sid == "" {
						sid = resp.Header.Get("Mcp-Session-Id")
					}
				}
				if status := stopAndWait(t, p); status != 0 {
					t.Fatalf("exit status %d", status)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cassette, stderr := string(b), p.stderr.String()
			if !strings.Contains(cassette, `"echo"`) || !strings.Contains(stderr, "tools/call echo") {
				t.Fatalf("the call was not recorded or not logged:\n%s\nstderr:\n%s", cassette, stderr)
			}
			for name, v := range secretArgs {
				if strings.Contains(cassette, v) {
					t.Errorf("the value of %s reached the cassette", name)
				}
				if strings.Contains(stderr, v) {
					t.Errorf("the value of %s reached the live log", name)
				}
			}
			for _, kept := range []string{`"maxTokens": "mt-kept-512"`, `"progressToken": "pt-kept-1"`} {
				if !strings.Contains(cassette, kept) {
					t.Errorf("the cassette lost %s", kept)
				}
			}
			if !strings.Contains(stderr, "mt-kept-512") {
				t.Errorf("the live log lost maxTokens")
			}
			if t.Failed() {
				t.Logf("cassette:\n%s\nstderr:\n%s", cassette, stderr)
			}
		})
	}
}

// TestLintFindsSecretNamedMembers: a cassette from before the names
// github_token and api_token counted as secrets fails cassette lint, with
// an error for each naming its interaction and JSON path, and none for
// maxTokens and progressToken.
func TestLintFindsSecretNamedMembers(t *testing.T) {
	path := tempCassette(t)
	old := `{"version": 1, "interactions": [
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "deploy", "arguments": {"github_token": "plain-gh-0002", "maxTokens": "100"}, "_meta": {"progressToken": "p"}}},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"api_token": "plain-api-0003"}}}}}
]}
`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if err := run(t.Context(), []string{"cassette", "lint", path}, strings.NewReader(""), &stdout, &stderr); err == nil {
		t.Fatalf("lint passed:\n%s", stderr.String())
	}
	for _, want := range []string{
		"error: " + path + ": line 2, column 3: interaction 1: a secret at request params.arguments.github_token (member name github_token)",
		"error: " + path + ": line 2, column 3: interaction 1: a secret at response result.structuredContent.api_token (member name api_token)",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("lint does not say %q:\n%s", want, stderr.String())
		}
	}
	if n := strings.Count(stderr.String(), ": interaction "); n != 2 {
		t.Errorf("%d problems, want 2:\n%s", n, stderr.String())
	}
}
