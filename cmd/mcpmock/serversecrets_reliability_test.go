package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// Secrets given to the recorded server: in the environment of the command
// line (env NAME=VALUE ...), in its flags (--api-key=VALUE, --token VALUE)
// and in a URL. None may reach the cassette's meta.server, the live log or
// an error message.
var serverSecrets = map[string][2]string{
	// what: {the argument(s) on the command line, the secret}
	"OpenAI key in the environment":   {"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"},
	"password in the environment":     {"DB_PASSWORD=plainpw_2233445566", "plainpw_2233445566"},
	"token in the environment":        {"SERVICE_TOKEN=plaintok_1029384756", "plaintok_1029384756"},
	"--api-key=VALUE":                 {"--api-key=plainkey_99887766", "plainkey_99887766"},
	"--token VALUE":                   {"--token\x00plaintok_55443322", "plaintok_55443322"},
	"--client-secret VALUE":           {"--client-secret\x00plainsec_12121212", "plainsec_12121212"},
	"URL with a password":             {"--db=postgres://admin:plainurlpw_777@db.local/x", "plainurlpw_777"},
	"GitHub token as a bare argument": {"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
}

// secretCommand is the test server's command line with the secrets in it:
// env assignments before the program, flags after it.
func secretCommand(kind string) []string {
	argv, env := testpeer.Command(kind)
	cmd := []string{"env"}
	cmd = append(cmd, env...)
	var flags []string
	for _, s := range serverSecrets {
		parts := strings.Split(s[0], "\x00")
		if strings.Contains(parts[0], "=") && !strings.HasPrefix(parts[0], "-") {
			cmd = append(cmd, parts...)
		} else {
			flags = append(flags, parts...)
		}
	}
	cmd = append(cmd, argv...)
	return append(cmd, flags...)
}

func TestServerSecretsNeverReachTheCassette(t *testing.T) {
	path := tempCassette(t)
	t.Setenv("MCPMOCK_TEST_INHERITED_SECRET", "inherited_0f1e2d3c4b5a")
	p := start(t, append([]string{"record", "-c", path, "--"}, secretCommand(testpeer.GoSDK)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	p.recv(t)
	p.stdin.Close()
	if status := p.wait(t); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	cassette, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cassette), `"server"`) || !strings.Contains(string(cassette), `"echo"`) {
		t.Fatalf("no meta.server or no session in the cassette:\n%s", cassette)
	}
	for what, s := range serverSecrets {
		if strings.Contains(string(cassette), s[1]) {
			t.Errorf("the %s reached the cassette", what)
		}
		if strings.Contains(p.stderr.String(), s[1]) {
			t.Errorf("the %s reached the live log", what)
		}
	}
	if strings.Contains(string(cassette), "inherited_0f1e2d3c4b5a") {
		t.Error("the inherited environment reached the cassette")
	}
	if t.Failed() {
		t.Logf("cassette:\n%s", cassette)
	}
}

// TestServerSecretsNotInErrors: a command that cannot start (a NAME=VALUE
// written as if for a shell) fails without showing the value.
func TestServerSecretsNotInErrors(t *testing.T) {
	for _, argv := range [][]string{
		{"API_TOKEN=plaintok_4455667788", "server"},
		{"/nonexistent/server", "--api-key=plaintok_4455667788"},
	} {
		path := tempCassette(t)
		p := start(t, append([]string{"record", "-c", path, "--"}, argv...)...)
		p.stdin.Close()
		if status := p.wait(t); status == 0 {
			t.Errorf("%q: exit status 0", argv)
		}
		if stderr := p.stderr.String(); strings.Contains(stderr, "plaintok_4455667788") {
			t.Errorf("%q: the error shows the secret:\n%s", argv, stderr)
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), "plaintok_4455667788") {
			t.Errorf("%q: the secret is in the cassette", argv)
		}
	}
}
