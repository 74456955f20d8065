package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

type clientFunc func(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts testpeer.ClientOptions) (testpeer.Transcript, error)

var clients = map[string]clientFunc{"go-sdk": testpeer.RunGoSDK, "mcp-go": testpeer.RunMCPGo}

// session runs a scripted client of the given library against a running
// mcpmock (record or replay) and returns what it saw.
func session(t *testing.T, p *proc, library, protocol string) testpeer.Transcript {
	t.Helper()
	tr, err := clients[library](testContext(t), p.stdout, p.stdin, testpeer.ClientOptions{ProtocolVersion: protocol, Name: library + "-client", Version: "9.9." + library})
	if err != nil {
		t.Fatalf("%s client: %v", library, err)
	}
	return tr
}

// TestRecordReplayAcrossClients records a session through the tap with one
// client library, replays the cassette to the other, and compares what the
// two real clients saw: in both protocol eras, against go-sdk and mcp-go
// servers, and after a server/discover probe that the server refused.
func TestRecordReplayAcrossClients(t *testing.T) {
	tests := []struct {
		server, protocol, recordWith, replayWith string
	}{
		{testpeer.GoSDK, "", "go-sdk", "mcp-go"},
		{testpeer.GoSDK, "", "mcp-go", "go-sdk"},
		{testpeer.GoSDK, "2025-11-25", "go-sdk", "mcp-go"},
		{testpeer.GoSDK, "2025-11-25", "mcp-go", "go-sdk"},
		{testpeer.GoSDKLegacy, "", "go-sdk", "mcp-go"},
		{testpeer.GoSDKLegacy, "", "mcp-go", "go-sdk"},
		{testpeer.MCPGo, "", "mcp-go", "go-sdk"},
		{testpeer.MCPGo, "2025-11-25", "go-sdk", "mcp-go"},
	}
	for _, tt := range tests {
		name := tt.server + "/" + tt.recordWith + "-then-" + tt.replayWith
		if tt.protocol != "" {
			name += "/" + tt.protocol
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := tempCassette(t)
			rec := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(tt.server)...)...)
			live := session(t, rec, tt.recordWith, tt.protocol)
			if status := rec.wait(t); status != 0 {
				t.Fatalf("record exited with %d", status)
			}
			if !strings.Contains(rec.stderr.String(), "tools/call get_weather") {
				t.Errorf("the live log does not show the calls:\n%s", rec.stderr)
			}

			rep := start(t, "replay", "-c", path)
			replayed := session(t, rep, tt.replayWith, tt.protocol)
			rep.stdin.Close()
			if status := rep.wait(t); status != 0 {
				t.Fatalf("replay exited with %d", status)
			}
			if diff := cmp.Diff(live, replayed); diff != "" {
				t.Errorf("replay to %s differs from the live session of %s (-live +replayed):\n%s", tt.replayWith, tt.recordWith, diff)
			}
			if !strings.Contains(rep.stderr.String(), " 0 unmatched") {
				t.Errorf("summary shows misses:\n%s", rep.stderr)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.server == testpeer.GoSDKLegacy {
				methods := requestMethods(c)
				if len(methods) < 2 || methods[0] != "server/discover" || methods[1] != "initialize" {
					t.Errorf("want a refused server/discover then initialize, got %v", methods)
				}
			}
		})
	}
}

func requestMethods(c *cassettes.Cassette) []string {
	var out []string
	for _, in := range c.Interactions {
		if in.Request != nil && in.From == cassettes.FromClient {
			var m struct{ Method string }
			json.Unmarshal(in.Request, &m)
			out = append(out, m.Method)
		}
	}
	return out
}

// TestHandEditShowsInReplay changes a recorded result in the cassette file
// and sees the change in a real client's replay.
func TestHandEditShowsInReplay(t *testing.T) {
	path := tempCassette(t)
	rec := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDK)...)...)
	live := session(t, rec, "go-sdk", "2025-11-25")
	rec.wait(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "Partly cloudy", "Heavy snow", -1)
	if edited == string(data) {
		t.Fatal("the cassette does not hold the recorded text")
	}
	os.WriteFile(path, []byte(edited), 0o644)
	rep := start(t, "replay", "-c", path)
	replayed := session(t, rep, "mcp-go", "2025-11-25")
	var sawEdit bool
	for i := range replayed {
		if strings.Contains(replayed[i].Result, "Heavy snow") {
			sawEdit = true
			replayed[i].Result = strings.ReplaceAll(replayed[i].Result, "Heavy snow", "Partly cloudy")
		}
	}
	if !sawEdit {
		t.Errorf("the edit does not show in replay: %v", replayed)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("apart from the edit, replay differs (-live +replayed):\n%s", diff)
	}
}

const (
	initReq     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// recordRaw records a short raw session (initialize and one call) and
// returns the cassette path.
func recordRaw(t *testing.T) string {
	t.Helper()
	path := tempCassette(t)
	p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.send(t, initialized)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`)
	p.recv(t)
	p.stdin.Close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("record exited %d", s)
	}
	return path
}

// TestReplayMalformedLine: a line that is not JSON gets -32700 and the
// session goes on; an invalid request gets -32600.
func TestReplayMalformedLine(t *testing.T) {
	path := recordRaw(t)
	p := start(t, "replay", "-c", path)
	p.send(t, initReq)
	if m := p.recv(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`)
	if code := errorCode(t, p.recv(t)); code != -32700 {
		t.Errorf("malformed line: code %d, want -32700", code)
	}
	p.send(t, "\x00\xff\xfe binary garbage")
	if code := errorCode(t, p.recv(t)); code != -32700 {
		t.Errorf("garbage: code %d, want -32700", code)
	}
	p.send(t, `{"jsonrpc":"1.0","id":3,"method":"tools/list"}`)
	m := p.recv(t)
	if code := errorCode(t, m); code != -32600 || m["id"] != float64(3) {
		t.Errorf("wrong version: %v, want -32600 with id 3", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}}`)
	m = p.recv(t)
	if m["id"] != "x" || m["result"] == nil {
		t.Errorf("the session did not go on after bad lines: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Boston"}}}`)
	m = p.recv(t)
	if code := errorCode(t, m); code != -32010 {
		t.Errorf("miss: code %d", code)
	}
	msg := m["error"].(map[string]any)["message"].(string)
	for _, want := range []string{`tools/call of tool "get_weather"`, `arguments.location: recorded "New York", live "Boston"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss message %q lacks %q", msg, want)
		}
	}
	if data := m["error"].(map[string]any)["data"].(map[string]any); data["candidates"] == nil {
		t.Errorf("miss data lacks candidates: %v", data)
	}
	p.send(t, `{"jsonrpc":"2.0","id":5,"method":"resources/list"}`)
	if code := errorCode(t, p.recv(t)); code != -32601 {
		t.Errorf("unrecorded method: code %d, want -32601", code)
	}
	p.stdin.Close()
	if s := p.wait(t); s != 1 {
		t.Errorf("replay exited %d", s)
	}
	if !strings.Contains(p.stderr.String(), `arguments.location: recorded "New York", live "Boston"`) {
		t.Errorf("the miss is not explained on stderr:\n%s", p.stderr)
	}
}

// TestRecordServerCrash: the server dies mid-call; the client gets an error,
// mcpmock exits with the server's status and the cassette keeps the session.
func TestRecordServerCrash(t *testing.T) {
	path := tempCassette(t)
	p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.send(t, initialized)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
	m := p.recv(t)
	if code := errorCode(t, m); code != -32603 || m["id"] != float64(2) {
		t.Errorf("crash: %v, want -32603 for id 2", m)
	}
	if s := p.wait(t); s != 3 {
		t.Errorf("exit status %d, want the server's 3", s)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := requestMethods(c); !cmp.Equal(got, []string{"initialize", "tools/call"}) {
		t.Errorf("recorded requests %v", got)
	}
	last := c.Interactions[len(c.Interactions)-1]
	if last.Response != nil {
		t.Errorf("the crashed call has a recorded response: %s", last.Response.Message)
	}
}

// TestRecordClientClosesMidCall: the client goes away while a call is in
// flight; the tap stops the server and keeps the cassette.
func TestRecordClientClosesMidCall(t *testing.T) {
	path := tempCassette(t)
	p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.send(t, initReq)
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	p.stdin.Close()
	p.wait(t)
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := requestMethods(c); !cmp.Equal(got, []string{"initialize", "tools/call"}) {
		t.Errorf("recorded requests %v", got)
	}
}

// TestRecordSignals: SIGINT and SIGTERM go to the server, and the cassette
// holds every completed interaction; SIGKILL of the tap leaves a valid
// cassette with what completed more than a second before.
func TestRecordSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			path := tempCassette(t)
			p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
			p.send(t, initReq)
			p.recv(t)
			p.send(t, initialized)
			for i := range 3 {
				p.send(t, `{"jsonrpc":"2.0","id":`+string(rune('5'+i))+`,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
				p.recv(t)
			}
			if sig == syscall.SIGKILL {
				// The guarantee: what completed more than a second ago is
				// on disk. Give it that second, then kill.
				time.Sleep(1100 * time.Millisecond)
			}
			p.cmd.Process.Signal(sig)
			status := p.wait(t)
			if sig != syscall.SIGKILL && status == 0 {
				t.Logf("exit status %d after %v", status, sig)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatalf("cassette after %v: %v", sig, err)
			}
			got := requestMethods(c)
			if !cmp.Equal(got, []string{"initialize", "tools/call", "tools/call", "tools/call"}) {
				t.Errorf("after %v the cassette holds %v", sig, got)
			}
			for _, in := range c.Interactions {
				if in.Request != nil && in.Response == nil {
					t.Errorf("after %v a completed request lacks its response: %s", sig, in.Request)
				}
			}
		})
	}
}

// TestUsage: usage errors exit 2, with a message.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"record"}, {"record", "-c", "x.json"}, {"replay"}, {"frobnicate"}, {"replay", "-c", "x", "--nope"}} {
		var stderr syncBuffer
		err := run(t.Context(), args, strings.NewReader(""), io.Discard, &stderr)
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("mcpmock %v: exit %d, want 2 (%v)", args, code, err)
		}
	}
	var stderr syncBuffer
	err := run(t.Context(), []string{"replay", "-c", "/nonexistent.json"}, strings.NewReader(""), io.Discard, &stderr)
	if code := exitCode(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "nonexistent.json") {
		t.Errorf("missing cassette: exit %d, stderr %q", code, stderr.String())
	}
}

// TestDemo runs the demo as a user does and checks its verdict.
func TestDemo(t *testing.T) {
	var stdout, stderr syncBuffer
	keep := tempCassette(t)
	if err := run(testContext(t), []string{"demo", "--keep", keep}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	if !strings.Contains(stdout.String(), "Both clients saw the same 3 results.") {
		t.Errorf("demo output:\n%s", &stdout)
	}
	if !strings.Contains(stderr.String(), "✗ tool error") {
		t.Errorf("the live log does not mark the tool error:\n%s", &stderr)
	}
	if _, err := cassettes.Load(keep); err != nil {
		t.Errorf("the kept cassette: %v", err)
	}
}

// TestDemoOrder: on one terminal (stdout and stderr the same), each step's
// live log comes before the step's results, though the log's lines wait a
// few milliseconds to be written (TextHandler.Batched) and a step is over
// sooner.
func TestDemoOrder(t *testing.T) {
	var out syncBuffer
	if err := run(testContext(t), []string{"demo"}, strings.NewReader(""), &out, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, &out)
	}
	got := out.String()
	at := func(s string) int {
		i := strings.Index(got, s)
		if i < 0 {
			t.Fatalf("no %q in the demo's output:\n%s", s, got)
		}
		return i
	}
	for _, order := range [][2]string{
		{"mcpmock: ← 4 ✗ tool error", "   recorded 8 messages"},
		{"   recorded 8 messages", "2. Replaying"},
		{"[replayed #4]", "   replayed 4 messages"},
	} {
		if at(order[0]) > at(order[1]) {
			t.Errorf("%q comes after %q:\n%s", order[0], order[1], got)
		}
	}
}

// TestLogFormats: --log json writes one JSON object per message; --quiet
// writes only the summary.
func TestLogFormats(t *testing.T) {
	path := recordRaw(t)
	for _, mode := range [][]string{{"--log", "json"}, {"--quiet"}} {
		p := start(t, append([]string{"replay", "-c", path}, mode...)...)
		p.send(t, initReq)
		p.recv(t)
		p.stdin.Close()
		p.wait(t)
		lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
		switch mode[0] {
		case "--log":
			for _, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Errorf("--log json wrote a line that is not JSON: %q", l)
				}
			}
			if !strings.Contains(p.stderr.String(), `"method":"initialize"`) {
				t.Errorf("--log json lacks the method:\n%s", p.stderr)
			}
		case "--quiet":
			if len(lines) != 1 || !strings.Contains(lines[0], "1 matched") {
				t.Errorf("--quiet wrote %q, want only the summary", lines)
			}
		}
	}
}
