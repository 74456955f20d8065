package main

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// The seeded secrets: each is something the default redaction rules know.
var seeded = map[string]string{
	"bearer token in Authorization": "tok_9f8e7d6c5b4a39281706",
	"API key header":                "key_0a1b2c3d4e5f60718293",
	"cookie":                        "sess_77aa88bb99cc00dd11ee",
	"query api_key upstream":        "qk_5566778899aabbccddee",
	"query token from the client":   "qt_1122334455667788aabb",
	"OpenAI-like key in arguments":  "sk-proj-abcdefghijklmnopqrstuvwx",
	"GitHub token in arguments":     "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	"secret-named argument":         "pw_aabbccddeeff00112233",
}

// TestSecretsNeverReachTheCassette records an HTTP session through the tap
// of the real binary with secrets in headers, query strings and arguments,
// and checks that none reaches the cassette, the live log or stderr.
func TestSecretsNeverReachTheCassette(t *testing.T) {
	path := tempCassette(t)
	up := httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true})
	p, u := startListening(t, "record", "-c", path, "--upstream", up+"/mcp?api_key="+seeded["query api_key upstream"], "--listen", ":0")
	send := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, u+"?token="+seeded["query token from the client"], strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+seeded["bearer token in Authorization"])
		req.Header.Set("X-Api-Key", seeded["API key header"])
		req.Header.Set("Cookie", "session="+seeded["cookie"])
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	sid := send("", initReq).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session through the tap")
	}
	send(sid, initialized)
	send(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"use `+seeded["OpenAI-like key in arguments"]+` and `+seeded["GitHub token in arguments"]+`"}}}`)
	send(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","password":"`+seeded["secret-named argument"]+`"}}}`)
	if status := stopAndWait(t, p); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	cassette, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cassette), `"echo"`) {
		t.Fatalf("the session was not recorded:\n%s", cassette)
	}
	for what, secret := range seeded {
		if strings.Contains(string(cassette), secret) {
			t.Errorf("the %s reached the cassette", what)
		}
		if strings.Contains(p.stderr.String(), secret) {
			t.Errorf("the %s reached the live log", what)
		}
	}
	if t.Failed() {
		t.Logf("cassette:\n%s", cassette)
	}
}

// TestRecordForbid: a value the rules do not know, named with --forbid or
// --forbid-env, makes record refuse to save, without showing the value in
// the error or in the live log.
func TestRecordForbid(t *testing.T) {
	const plain = "plainvalue-nobody-would-guess"
	t.Setenv("MCPMOCK_TEST_FORBIDDEN", plain)
	for _, flag := range [][]string{{"--forbid", plain}, {"--forbid-env", "MCPMOCK_TEST_FORBIDDEN"}} {
		t.Run(flag[0], func(t *testing.T) {
			path := tempCassette(t)
			p := start(t, append(append([]string{"record", "-c", path}, flag...), append([]string{"--"}, peerCommand(testpeer.GoSDK)...)...)...)
			p.send(t, initReq)
			p.recv(t)
			p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+plain+`"}}}`)
			p.recv(t)
			p.stdin.Close()
			if status := p.wait(t); status != 1 {
				t.Errorf("exit status %d, want 1", status)
			}
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), plain) {
				t.Error("the forbidden value is in the cassette")
			}
			stderr := p.stderr.String()
			if !strings.Contains(stderr, "forbidden value") {
				t.Errorf("stderr does not say why:\n%s", stderr)
			}
			// The error names the value without showing it, and the live
			// log hides it as the cassette would: it never reaches stderr.
			if !strings.Contains(stderr, "tools/call echo") {
				t.Errorf("the call is not in the live log:\n%s", stderr)
			}
			for _, line := range strings.Split(stderr, "\n") {
				if strings.Contains(line, plain) {
					t.Errorf("stderr shows the value: %s", line)
				}
			}
		})
	}
}
