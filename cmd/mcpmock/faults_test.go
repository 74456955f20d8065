package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

const weatherCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`

func callN(n int) string { return strings.Replace(weatherCall, "%d", itoa(n), 1) }

func itoa(n int) string { return strconv.Itoa(n) }

// answers sends n get_weather calls and summarises each answer.
func answers(t *testing.T, p *proc, n int) []string {
	t.Helper()
	var out []string
	for i := 1; i <= n; i++ {
		p.send(t, callN(i+10))
		m := p.recv(t)
		switch {
		case m["error"] != nil:
			out = append(out, "error "+itoa(-errorCode(t, m)))
		case m["result"].(map[string]any)["isError"] == true:
			out = append(out, "tool error")
		default:
			out = append(out, "ok")
		}
	}
	return out
}

// TestFaultFlagAndOverlay: the README's shortcut and overlay make the
// third call fail, as a client sees it.
func TestFaultFlagAndOverlay(t *testing.T) {
	path := recordRaw(t)
	overlayPath := filepath.Join(t.TempDir(), "ratelimit.json")
	os.WriteFile(overlayPath, []byte(`{
  "version": 1,
  "interactions": [
    {
      "request": {"method": "tools/call", "params": {"name": "get_weather"}},
      "when": {"nth": 3},
      "response": {"message": {"result": {"isError": true,
        "content": [{"type": "text", "text": "Failed to fetch weather data: API rate limit exceeded"}]}}}
    }
  ]
}
`), 0o644)
	for _, args := range [][]string{
		{"--fault", "get_weather#3=tool-error:Failed to fetch weather data: API rate limit exceeded"},
		{"--overlay", overlayPath},
	} {
		p := start(t, append([]string{"replay", "-c", path}, args...)...)
		p.send(t, initReq)
		p.recv(t)
		got := answers(t, p, 4)
		if diff := cmp.Diff([]string{"ok", "ok", "tool error", "ok"}, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", args, diff)
		}
		p.stdin.Close()
		p.wait(t)
		if !strings.Contains(p.stderr.String(), "scripted: overlay 1 interaction 1") {
			t.Errorf("the live log does not mark the scripted answer:\n%s", p.stderr)
		}
	}
}

func TestFaultShortcuts(t *testing.T) {
	path := recordRaw(t)
	p := start(t, "replay", "-c", path, "--fault", "get_weather%2=error:-32603:upstream down", "--fault", "tools/list=error:-32000")
	p.send(t, initReq)
	p.recv(t)
	if diff := cmp.Diff([]string{"ok", "error 32603", "ok", "error 32603"}, answers(t, p, 4)); diff != "" {
		t.Errorf("every 2nd call (-want +got):\n%s", diff)
	}
	p.stdin.Close()
	p.wait(t)

	p = start(t, "replay", "-c", path, "--fault", "get_weather#2=exit:9")
	p.send(t, initReq)
	p.recv(t)
	answers(t, p, 1)
	p.send(t, callN(2))
	if s := p.wait(t); s != 9 {
		t.Errorf("exit fault: status %d, want 9", s)
	}

	for _, bad := range []string{"get_weather", "get_weather#x=close", "get_weather=explode", "get_weather=http:abc"} {
		var stderr syncBuffer
		err := run(t.Context(), []string{"replay", "-c", path, "--fault", bad}, strings.NewReader(""), &stderr, &stderr)
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("--fault %q: exit %d (%v), want a usage error", bad, code, err)
		}
	}
}

// TestFaultOverHTTP: a rate limit scripted on the command line reaches an
// HTTP client as 429 with Retry-After.
func TestFaultOverHTTP(t *testing.T) {
	path := recordRaw(t)
	p, u := startListening(t, "replay", "-c", path, "--listen", "127.0.0.1:0", "--fault", "get_weather@1/1m=http:429:Retry-After=60")
	post := func(body, sid string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	sid := post(initReq, "").Header.Get("Mcp-Session-Id")
	var got []string
	for i := range 3 {
		resp := post(callN(i+20), sid)
		got = append(got, resp.Status+" "+resp.Header.Get("Retry-After"))
	}
	if diff := cmp.Diff([]string{"200 OK ", "429 Too Many Requests 60", "429 Too Many Requests 60"}, got); diff != "" {
		t.Errorf("one call a minute (-want +got):\n%s", diff)
	}
	stopAndWait(t, p)
}

// TestModeNewEpisodes: a miss goes to the live server, its answer reaches
// the client and is appended to the cassette, and a plain replay then
// answers it with no server.
func TestModeNewEpisodes(t *testing.T) {
	path := recordRaw(t)
	london := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"London"}}}`
	p := start(t, append([]string{"replay", "-c", path, "--mode", "new-episodes", "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	for i := range 2 {
		p.send(t, strings.Replace(london, "%d", strconv.Itoa(30+i), 1))
		m := p.recv(t)
		if m["id"] != float64(30+i) || !strings.Contains(fmt.Sprint(m["result"]), "Current weather in London") {
			t.Fatalf("call %d: %v", i, m)
		}
	}
	p.stdin.Close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("exit %d", s)
	}
	if !strings.Contains(p.stderr.String(), "appended 1 new episodes") {
		t.Errorf("stderr:\n%s", p.stderr)
	}
	r := start(t, "replay", "-c", path)
	r.send(t, initReq)
	r.recv(t)
	r.send(t, strings.Replace(london, "%d", "40", 1))
	if m := r.recv(t); !strings.Contains(fmt.Sprint(m["result"]), "Current weather in London") {
		t.Errorf("plain replay after new-episodes: %v", m)
	}
	r.stdin.Close()
	r.wait(t)
}
