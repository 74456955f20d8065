package mcpmocktest_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/mcpmocktest"
)

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// TestFailedRecordWritesNothing: a record whose live server never
// answered (a command that does not exist, an upstream URL that refuses
// connections) writes no cassette through any way in: an existing one is
// left as it was, and ModeOnce records again next time.
func TestFailedRecordWritesNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := "http://" + l.Addr().String() + "/mcp"
	l.Close() // nothing listens there now
	for _, tc := range []struct {
		way  string
		opts mcpmocktest.Options
	}{
		{"conn", mcpmocktest.Options{Upstream: []string{"/nonexistent/mcp-server"}}},
		{"command", mcpmocktest.Options{Upstream: []string{"/nonexistent/mcp-server"}}},
		{"conn", mcpmocktest.Options{UpstreamURL: refusing}},
		{"url", mcpmocktest.Options{UpstreamURL: refusing}},
	} {
		for _, existing := range []bool{false, true} {
			name := tc.way + "/upstream-command"
			if tc.opts.UpstreamURL != "" {
				name = tc.way + "/upstream-url"
			}
			if existing {
				name += "/existing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "testdata", "c.json")
				const old = `{"version":1,"meta":{},"interactions":[]}`
				if existing {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				opts := tc.opts
				opts.Mode = mcpmocktest.ModeRecord
				ft := &fakeT{TB: t}
				srv := mcpmocktest.NewServer(ft, path, &opts)
				failedSession(t, srv, tc.way)
				srv.Close()
				b, err := os.ReadFile(path)
				switch {
				case existing && (err != nil || string(b) != old):
					t.Errorf("the existing cassette was changed: %q, %v", b, err)
				case !existing && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("the failed record wrote a cassette: %q, %v", b, err)
				}
				if existing {
					return
				}
				opts.Mode = mcpmocktest.ModeOnce
				if m := mcpmocktest.NewServer(&fakeT{TB: t}, path, &opts).Mode(); m != mcpmocktest.ModeRecord {
					t.Errorf("once after a failed record: Mode() = %q, want record", m)
				}
			})
		}
	}
}

// failedSession sends an initialize to srv through the way in and reads
// what comes back until the session ends.
func failedSession(t *testing.T, srv *mcpmocktest.Server, way string) {
	t.Helper()
	switch way {
	case "conn":
		r, w := srv.Conn()
		io.WriteString(w, initLine+"\n") // fails if the session already ended
		w.Close()
		io.Copy(io.Discard, r)
	case "command":
		argv, env := srv.Command()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(initLine + "\n")
		cmd.Run() // fails: the upstream does not start
	case "url":
		req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL(), strings.NewReader(initLine))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
