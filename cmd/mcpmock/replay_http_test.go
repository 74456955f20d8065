package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestReplayListen records a stdio session, replays it with --listen and a
// token, connects real go-sdk and mcp-go clients over Streamable HTTP and
// HTTP+SSE, checks the listener's safety, and stops mcpmock with SIGTERM.
func TestReplayListen(t *testing.T) {
	path := tempCassette(t)
	rec := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	live := session(t, rec, "go-sdk", "")
	if status := rec.wait(t); status != 0 {
		t.Fatalf("record exited with %d", status)
	}

	rep, url := startListening(t, "replay", "-c", path, "--listen", "127.0.0.1:0", "--auth-token", "s3cret")
	auth := http.Header{"Authorization": {"Bearer s3cret"}}
	sseURL := strings.TrimSuffix(url, "/mcp") + "/sse"
	for _, c := range []struct {
		name string
		run  func() (testpeer.Transcript, error)
	}{
		{"mcp-go streamable", func() (testpeer.Transcript, error) {
			return testpeer.RunMCPGoHTTP(testContext(t), url, testpeer.HTTPOptions{Header: auth})
		}},
		{"go-sdk streamable 2025-11-25", func() (testpeer.Transcript, error) {
			return testpeer.RunGoSDKHTTP(testContext(t), url, testpeer.HTTPOptions{Header: auth, ClientOptions: testpeer.ClientOptions{ProtocolVersion: "2025-11-25"}})
		}},
		{"go-sdk sse", func() (testpeer.Transcript, error) {
			return testpeer.RunGoSDKHTTP(testContext(t), sseURL, testpeer.HTTPOptions{Header: auth, SSE: true})
		}},
	} {
		got, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(live, got); diff != "" {
			t.Errorf("%s: replay over HTTP differs from the live stdio session (-live +replayed):\n%s", c.name, diff)
		}
	}

	for _, tc := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"foreign origin", http.Header{"Authorization": {"Bearer s3cret"}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header = tc.header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate header", tc.name)
		}
	}

	if err := rep.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if status := rep.wait(t); status != 0 {
		t.Fatalf("replay exited with %d after SIGTERM, want 0", status)
	}
	if s := rep.stderr.String(); !strings.Contains(s, "replayed ") || !strings.Contains(s, " 0 unmatched") {
		t.Errorf("no clean summary on stderr:\n%s", s)
	}
}

func TestReplayListenRefusesRemoteWithoutFlag(t *testing.T) {
	path := tempCassette(t)
	if err := os.WriteFile(path, []byte(`{"version":1,"meta":{},"interactions":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	err := run(t.Context(), []string{"replay", "-c", path, "--listen", "0.0.0.0:0"}, strings.NewReader(""), io.Discard, &stderr)
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("want a usage error naming --allow-remote, got %v", err)
	}
}

// TestOneThread checks that the HTTP replay runs on one thread, puts back
// what was when it ends, and leaves a GOMAXPROCS that the user set alone.
func TestOneThread(t *testing.T) {
	before := runtime.GOMAXPROCS(2) // two at least, whatever the machine
	defer runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "")
	restore := oneThread()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS unset: %d threads, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("after the replay: %d, want 2 back", n)
	}
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	restore = oneThread()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS=3: %d threads, want the user's 3", n)
	}
	restore()
}
