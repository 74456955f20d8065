package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// recordGoSDK records one scripted go-sdk client session with a go-sdk
// server through the real tap and returns the cassette's bytes.
func recordGoSDK(t *testing.T, path string, args ...string) []byte {
	t.Helper()
	p := start(t, append(append([]string{"record", "-c", path}, args...), append([]string{"--"}, peerCommand(testpeer.GoSDKLegacy)...)...)...)
	session(t, p, "go-sdk", "")
	if s := p.wait(t); s != 0 {
		t.Fatalf("record exited %d", s)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRerecordIsStable: recording the same session twice gives the same
// file byte for byte (timing, dates and session ids normalised), with the
// server's name and version in meta.
func TestRerecordIsStable(t *testing.T) {
	path := tempCassette(t)
	first := recordGoSDK(t, path)
	second := recordGoSDK(t, path)
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("re-recording changed the cassette (-first +second):\n%s", diff)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta.ServerInfo == nil || c.Meta.ServerInfo.Name == "" {
		t.Errorf("no serverInfo in meta: %+v", c.Meta)
	}
	if _, ok := c.RecordedTime(); !ok {
		t.Errorf("recordedAt %q", c.Meta.RecordedAt)
	}
}

// withSecret adds an API key to the recorded get_weather call's arguments
// and to its result, as a careless server would echo it.
func withSecret(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Replace(data, []byte(`"location": "New York"`), []byte(`"location": "New York", "apiKey": "live-key-123"`), 1)
	out = bytes.Replace(out, []byte(`"text": "`), []byte(`"text": "key sk-abcdefghijklmnopqrstuvwx0123 `), 1)
	if bytes.Equal(out, data) {
		t.Fatalf("no call to edit in:\n%s", data)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLintRedactReplay: a cassette with a secret fails lint with its
// position; redact removes it in place; lint passes; and a live request
// with the real key still matches the redacted recording.
func TestLintRedactReplay(t *testing.T) {
	path := recordRaw(t)
	lint := start(t, "cassette", "lint", path)
	if s := lint.wait(t); s != 0 {
		t.Fatalf("lint of a clean recording exited %d:\n%s", s, lint.stderr)
	}
	withSecret(t, path)
	lint = start(t, "cassette", "lint", path)
	if s := lint.wait(t); s != 1 {
		t.Fatalf("lint of a cassette with a secret exited %d, want 1:\n%s", s, lint.stderr)
	}
	if !strings.Contains(lint.stderr.String(), "error: "+path+": line ") || !strings.Contains(lint.stderr.String(), ": interaction 3: a secret at request params.arguments.apiKey") || !strings.Contains(lint.stderr.String(), "apiKey") {
		t.Errorf("lint output does not name the place:\n%s", lint.stderr)
	}
	red := start(t, "cassette", "redact", "-c", path)
	if s := red.wait(t); s != 0 {
		t.Fatalf("redact exited %d:\n%s", s, red.stderr)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("live-key-123")) || bytes.Contains(data, []byte("sk-abcdef")) {
		t.Fatalf("secrets left after redact:\n%s", data)
	}
	lint = start(t, "cassette", "lint", path)
	if s := lint.wait(t); s != 0 {
		t.Fatalf("lint after redact exited %d:\n%s", s, lint.stderr)
	}
	rep := start(t, "replay", "-c", path)
	rep.send(t, initReq)
	rep.recv(t)
	rep.send(t, initialized)
	rep.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","apiKey":"live-key-123"}}}`)
	if m := rep.recv(t); m["result"] == nil {
		t.Errorf("the live call with the real key does not match the redacted recording: %v", m)
	}
	rep.stdin.Close()
	rep.wait(t)
}

// TestVerifyDrift: verify against the unchanged server reports no drift;
// against a cassette whose recorded tool list differs from the live one it
// reports the removed tool and the changed schema, and fails.
func TestVerifyDrift(t *testing.T) {
	path := tempCassette(t)
	recordGoSDK(t, path)
	ok := start(t, append([]string{"cassette", "verify", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	if s := ok.wait(t); s != 0 {
		t.Fatalf("verify of a fresh recording exited %d:\n%s", s, ok.stderr)
	}
	out, _ := os.ReadFile(path)
	c, err := cassettes.Parse(path, out)
	if err != nil {
		t.Fatal(err)
	}
	edited := false
	for i, in := range c.Interactions {
		if edited || in.Response == nil || !bytes.Contains(in.Request, []byte(`"tools/list"`)) || !bytes.Contains(in.Response.Message, []byte(`"location":{"type":"string"`)) {
			continue
		}
		msg := string(in.Response.Message)
		// The recording knew a tool the live server no longer has, and
		// get_weather's location was a number then.
		msg = strings.Replace(msg, `"tools":[`, `"tools":[{"name":"old_tool","inputSchema":{"type":"object"}},`, 1)
		msg = strings.Replace(msg, `"location":{"type":"string"`, `"location":{"type":"number"`, 1)
		c.Interactions[i].Response.Message = []byte(msg)
		edited = true
	}
	if !edited {
		t.Fatalf("no tools/list in the recording:\n%s", out)
	}
	if err := cassettes.Save(path, c); err != nil {
		t.Fatal(err)
	}
	drift := start(t, append([]string{"cassette", "verify", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	report, _ := readAll(drift)
	if s := drift.wait(t); s != 1 {
		t.Fatalf("verify of a drifted cassette exited %d, want 1:\n%s", s, drift.stderr)
	}
	for _, want := range []string{"BREAKING: tool old_tool was removed", `BREAKING: tool get_weather: argument "location" changed type from "number" to "string"`} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

func readAll(p *proc) (string, error) {
	var b strings.Builder
	_, err := p.lines.WriteTo(&b)
	return b.String(), err
}

// TestModeOnce: once records when the cassette is missing, and replays it
// when it exists, without starting the server (the command is a program
// that does not exist).
func TestModeOnce(t *testing.T) {
	path := tempCassette(t)
	rec := start(t, append([]string{"replay", "--mode", "once", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	live := session(t, rec, "go-sdk", "")
	if s := rec.wait(t); s != 0 {
		t.Fatalf("once (recording) exited %d:\n%s", s, rec.stderr)
	}
	if _, err := cassettes.Load(path); err != nil {
		t.Fatalf("once did not record: %v", err)
	}
	rep := start(t, "replay", "--mode", "once", "-c", path, "--", "/nonexistent/mcp-server")
	replayed := session(t, rep, "go-sdk", "")
	rep.stdin.Close()
	if s := rep.wait(t); s != 0 {
		t.Fatalf("once (replaying) exited %d:\n%s", s, rep.stderr)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("replay differs from the recording (-live +replayed):\n%s", diff)
	}
	if !strings.Contains(rep.stderr.String(), "replayed") {
		t.Errorf("the second run did not replay:\n%s", rep.stderr)
	}
}

// TestMaxAgeOfAStableFile: a stable cassette keeps only the day of its
// recording, so one recorded today is not older than --max-age 1h (it was
// said to be up to 24 hours old and failed), while one recorded three days
// ago is, by replay and by cassette lint alike.
func TestMaxAgeOfAStableFile(t *testing.T) {
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, tc := range []struct {
		day  time.Time
		fail bool
	}{
		{today, false},
		{today.Add(-72 * time.Hour), true},
	} {
		path := tempCassette(t)
		data := fmt.Sprintf(`{"version": 1, "meta": {"recordedAt": %q}, "interactions": [
  {"from": "client", "atMs": 0, "request": {"jsonrpc": "2.0", "id": 1, "method": "ping"},
   "response": {"from": "server", "atMs": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": {}}}}]}`, tc.day.Format(time.RFC3339))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"replay", "-c", path, "--max-age", "1h", "--max-age-fail"},
			{"cassette", "lint", "--max-age", "1h", "--max-age-fail", path},
		} {
			var stdout, stderr syncBuffer
			err := run(testContext(t), args, strings.NewReader(""), &stdout, &stderr)
			if failed := err != nil; failed != tc.fail {
				t.Errorf("%s recorded on %s: error %v, want failure %v\nstderr:\n%s", args[:2], tc.day.Format(time.DateOnly), err, tc.fail, &stderr)
			}
		}
	}
}
