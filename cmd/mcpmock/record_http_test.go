package main

import (
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// stopAndWait sends SIGTERM and waits for the exit status.
func stopAndWait(t *testing.T, p *proc) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(t)
}

func httpUpstream(t *testing.T, kind string, opts testpeer.HTTPServerOptions) string {
	t.Helper()
	h, err := testpeer.HTTPHandler(kind, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// TestRecordHTTPTap records an HTTP session through the tap of the real
// binary, stops it with SIGTERM, and replays the cassette to a stdio client.
func TestRecordHTTPTap(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			up := httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{})
			opts := testpeer.HTTPOptions{ClientOptions: testpeer.ClientOptions{ProtocolVersion: protocol}}
			direct, err := testpeer.RunGoSDKHTTP(testContext(t), up+"/mcp", opts)
			if err != nil {
				t.Fatal(err)
			}
			path := tempCassette(t)
			cmd, url := startListening(t, "record", "-c", path, "--upstream", up+"/mcp?api_key=sekrit", "--listen", "127.0.0.1:0", "--auth-token", "tok")
			opts.Header = map[string][]string{"Authorization": {"Bearer tok"}}
			// (mcp-go's client and go-sdk's stateful server do not agree on
			// 2026-07-28 even directly: mcp-go only for the stateful era.)
			run := testpeer.RunGoSDKHTTP
			if protocol != "" {
				run = testpeer.RunMCPGoHTTP
			}
			// The client's own query goes upstream and into the cassette,
			// its secret redacted.
			tapped, err := run(testContext(t), url+"?x=1&api_key=SECRET", opts)
			if err != nil {
				t.Fatalf("through the tap: %v", err)
			}
			if diff := cmp.Diff(direct, tapped); diff != "" {
				t.Errorf("through the tap (-direct +tap):\n%s", diff)
			}
			if status := stopAndWait(t, cmd); status != 0 {
				t.Fatalf("record exited with %d after SIGTERM", status)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Meta.Transport != "streamable-http" || len(c.Meta.Server) != 1 || strings.Contains(c.Meta.Server[0], "sekrit") {
				t.Errorf("meta %+v", c.Meta)
			}
			data, _ := os.ReadFile(path)
			if !strings.Contains(string(data), `"url": "/mcp?x=1&api_key=[REDACTED]"`) {
				t.Errorf("the cassette does not hold the request's URL")
			}
			var shown strings.Builder
			showTimeline(&shown, c, showOptions{})
			if strings.Count(shown.String(), "url /mcp?x=1&api_key=[REDACTED]") != 1 {
				t.Errorf("cassette show does not name the URL once:\n%s", shown.String())
			}
			for _, secret := range []string{"sekrit", "Bearer tok", "SECRET"} {
				if strings.Contains(string(data), secret) {
					t.Errorf("the cassette holds %q", secret)
				}
			}
			withHTTP := 0
			for _, in := range c.Interactions {
				if in.HTTP != nil && in.HTTP.Status != 0 {
					withHTTP++
				}
				if in.HTTP != nil && in.HTTP.RequestHeaders["Authorization"] != "" {
					t.Errorf("the listener's token went upstream: %v", in.HTTP.RequestHeaders)
				}
			}
			if withHTTP < 10 {
				t.Errorf("%d interactions with an HTTP status, want at least 10", withHTTP)
			}
			if !strings.Contains(cmd.stderr.String(), "recorded ") {
				t.Errorf("no summary on stderr")
			}

			// HTTP record, stdio replay.
			rep := start(t, "replay", "-c", path)
			replayed := session(t, rep, "go-sdk", protocol)
			rep.stdin.Close()
			if status := rep.wait(t); status != 0 {
				t.Fatalf("replay exited with %d", status)
			}
			if diff := cmp.Diff(direct, replayed); diff != "" {
				t.Errorf("stdio replay of the HTTP recording (-live +replayed):\n%s", diff)
			}
		})
	}
}

// TestRecordBridges: a stdio client records an HTTP server (--upstream
// without --listen), and an HTTP client records a stdio server (--listen
// with -- COMMAND).
func TestRecordBridges(t *testing.T) {
	t.Run("stdio-client-to-http-server", func(t *testing.T) {
		t.Parallel()
		up := httpUpstream(t, testpeer.MCPGo, testpeer.HTTPServerOptions{})
		direct, err := testpeer.RunGoSDKHTTP(testContext(t), up+"/mcp", testpeer.HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		path := tempCassette(t)
		p := start(t, "record", "-c", path, "--upstream", up+"/mcp")
		bridged := session(t, p, "mcp-go", "")
		if status := p.wait(t); status != 0 {
			t.Fatalf("record exited with %d", status)
		}
		if diff := cmp.Diff(direct, bridged); diff != "" {
			t.Errorf("(-http client direct +stdio client bridged):\n%s", diff)
		}
		c, err := cassettes.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Meta.Transport != "stdio" || len(c.Interactions) < 10 {
			t.Errorf("meta %+v, %d interactions", c.Meta, len(c.Interactions))
		}
	})
	t.Run("http-client-to-stdio-server", func(t *testing.T) {
		t.Parallel()
		path := tempCassette(t)
		cmd, url := startListening(t, append([]string{"record", "-c", path, "--listen", ":0", "--"}, peerCommand(testpeer.GoSDK)...)...)
		bridged, err := testpeer.RunGoSDKHTTP(testContext(t), url, testpeer.HTTPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if status := stopAndWait(t, cmd); status != 0 {
			t.Fatalf("record exited with %d after SIGTERM", status)
		}
		rep := start(t, "replay", "-c", path)
		replayed := session(t, rep, "go-sdk", "")
		rep.stdin.Close()
		rep.wait(t)
		if diff := cmp.Diff(bridged, replayed); diff != "" {
			t.Errorf("(-http client bridged +stdio replay):\n%s", diff)
		}
	})
}
