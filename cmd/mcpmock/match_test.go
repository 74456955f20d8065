package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// volatileCassette holds one get_weather call recorded with a timestamp and
// a request nonce; match is the cassette's "match" member ("" for none).
func volatileCassette(t *testing.T, match string) string {
	t.Helper()
	m := ""
	if match != "" {
		m = `"match": ` + match + ",\n  "
	}
	text := `{
  "version": 1,
  "meta": {},
  ` + m + `"interactions": [
    {
      "from": "client", "atMs": 0,
      "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                  "params": {"name": "get_weather", "arguments": {"location": "New York", "timestamp": 1767225600, "nonce": "a1"}}},
      "response": {"from": "server", "atMs": 1,
                   "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "72F, sunny"}]}}}
    }
  ]
}
`
	path := filepath.Join(t.TempDir(), "volatile.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const liveCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","timestamp":1767229999,"nonce":"zz"}}}`

// TestReplayVolatileArguments: a client that sends a timestamp and a nonce
// replays once a flag or a cassette rule loosens them, and gets a clear
// diff and hint without.
func TestReplayVolatileArguments(t *testing.T) {
	pass := []struct {
		name  string
		match string
		args  []string
	}{
		{"flag", "", []string{"--match-ignore", "arguments.timestamp", "--match-ignore", "arguments.nonce"}},
		{"tool flag", "", []string{"--match-tool", "get_weather:type=arguments.timestamp=number", "--match-tool", "get_weather:regex=arguments.nonce=^[a-z0-9]+$"}},
		{"match flag", "", []string{"--match", `{"ignore": ["arguments.timestamp", "arguments.nonce"]}`}},
		{"cassette rule", `{"tools": {"get_weather": {"ignore": ["arguments.timestamp", "arguments.nonce"]}}}`, nil},
		{"flag and cassette rule", `{"ignore": ["arguments.nonce"]}`, []string{"--match-ignore", "arguments.timestamp"}},
	}
	for _, tt := range pass {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, append([]string{"replay", "-c", volatileCassette(t, tt.match)}, tt.args...)...)
			p.send(t, liveCall)
			m := p.recv(t)
			if m["id"] != float64(7) || m["result"] == nil {
				t.Errorf("got %v, want the recorded result", m)
			}
			p.stdin.Close()
			if s := p.wait(t); s != 0 {
				t.Errorf("exit status %d", s)
			}
		})
	}

	t.Run("without", func(t *testing.T) {
		t.Parallel()
		p := start(t, "replay", "-c", volatileCassette(t, `{"ignore": ["arguments.nonce"]}`))
		p.send(t, liveCall)
		m := p.recv(t)
		if code := errorCode(t, m); code != -32010 {
			t.Fatalf("code %d, want -32010", code)
		}
		e := m["error"].(map[string]any)
		msg := e["message"].(string)
		for _, want := range []string{
			`no recorded tools/call of tool "get_weather" matches`,
			`closest is interaction 1: arguments.timestamp: recorded 1767225600, live 1767229999`,
			`to accept this, ignore arguments.timestamp: --match-ignore arguments.timestamp`,
			`"match": {"ignore":["arguments.timestamp"]} in the cassette`,
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if strings.Contains(msg, "nonce") {
			t.Errorf("message %q names the ignored nonce", msg)
		}
		data := e["data"].(map[string]any)
		c := data["candidates"].([]any)[0].(map[string]any)
		if c["interaction"] != float64(1) || !strings.Contains(c["diff"].(string), "1767229999") {
			t.Errorf("data's candidate: %v", c)
		}
		p.stdin.Close()
		p.wait(t)
		stderr := p.stderr.String()
		for _, want := range []string{"interaction 1 (-recorded +live):", "-", "1767225600", "+", "1767229999", "--match-ignore arguments.timestamp"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})

	t.Run("regex that does not hold", func(t *testing.T) {
		t.Parallel()
		p := start(t, "replay", "-c", volatileCassette(t, ""), "--match-ignore", "arguments.timestamp", "--match-tool", `get_weather:regex=arguments.nonce=^[a-z][0-9]$`)
		p.send(t, liveCall)
		m := p.recv(t)
		if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `arguments.nonce: live "zz" does not match regex ^[a-z][0-9]$`) {
			t.Errorf("message %q", msg)
		}
	})
}

func TestReplayBadMatchFlags(t *testing.T) {
	path := volatileCassette(t, "")
	for _, args := range [][]string{
		{"--match-ignore", "arguments..ts"},
		{"--match-tool", "get_weather"},
		{"--match-tool", "get_weather:regex=arguments.x=("},
		{"--match-tool", "get_weather:sometimes=arguments.x"},
		{"--match", `{"ignroe": []}`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), append([]string{"replay", "-c", path}, args...), strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("%q: exit %d (%v), want 2", args, code, err)
		}
	}
}

func TestLintMatchConfig(t *testing.T) {
	path := volatileCassette(t, `{"ignore": ["arguments.timestamp"], "tools": {"get_weather": {"regex": {"arguments.location": "^(New"}}}}`)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"cassette", "lint", path}, strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatalf("lint accepted a bad regex: %s", stdout.String())
	}
	want := `line 4, column 106: "match": tools.get_weather.regex["arguments.location"]: bad regular expression`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("lint said %q, want %q", stderr.String(), want)
	}
	stderr.Reset()
	good := volatileCassette(t, `{"ignore": ["arguments.timestamp", "_meta.com\\.example\\.nonce"], "subset": ["arguments"]}`)
	if err := run(t.Context(), []string{"cassette", "lint", good}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Errorf("lint refused a good cassette: %v\n%s", err, stderr.String())
	}
}
