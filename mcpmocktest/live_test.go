package mcpmocktest_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

// liveHTTP starts a real server of the kind over Streamable HTTP on
// loopback and returns its /mcp URL.
func liveHTTP(t *testing.T, kind string) string {
	t.Helper()
	h, err := testpeer.HTTPHandler(kind, testpeer.HTTPServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestRecordLive records real go-sdk and mcp-go servers, over HTTP
// (Options.UpstreamURL) and over stdio (Options.Upstream), through every
// way in, then replays the cassette through the URL to the other client
// library and compares the results.
func TestRecordLive(t *testing.T) {
	tests := []struct {
		upstream, kind, way, lib, version string
	}{
		{"url", testpeer.GoSDK, "url", "go-sdk", "2025-11-25"},
		{"url", testpeer.GoSDK, "url", "mcp-go", "2025-11-25"},
		{"url", testpeer.MCPGo, "url", "go-sdk", ""},
		{"url", testpeer.MCPGo, "url", "mcp-go", ""},
		{"url", testpeer.GoSDK, "conn", "mcp-go", "2025-11-25"},
		{"url", testpeer.MCPGo, "command", "go-sdk", "2025-11-25"},
		{"command", testpeer.GoSDK, "url", "go-sdk", "2025-11-25"},
		{"command", testpeer.MCPGo, "url", "mcp-go", ""},
	}
	for _, tt := range tests {
		name := strings.Join([]string{"upstream-" + tt.upstream, tt.kind, tt.way, tt.lib, orDefault(tt.version)}, "/")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "recorded.json")
			opts := &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord}
			if tt.upstream == "url" {
				opts.UpstreamURL = liveHTTP(t, tt.kind)
			} else {
				opts.Upstream, opts.UpstreamEnv = testpeer.Command(tt.kind)
			}
			rec := mcpmocktest.NewServer(t, path, opts)
			calls := weatherCalls("Paris", "Atlantis")
			live := runClient(t, rec, tt.lib, tt.version, tt.way, calls)
			rec.AssertCalled(t, "get_weather", map[string]any{"location": "Paris"})
			rec.Close()
			if !strings.Contains(live[0], "Current weather in Paris") || !strings.Contains(live[1], "tool error") {
				t.Fatalf("live results %q", live)
			}
			c, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Meta.ServerInfo == nil || len(c.Meta.Server) == 0 {
				t.Errorf("meta %+v", c.Meta)
			}
			other := map[string]string{"go-sdk": "mcp-go", "mcp-go": "go-sdk"}[tt.lib]
			srv := mcpmocktest.NewServer(t, path, &mcpmocktest.Options{FailOnUnused: true})
			replayed := runClient(t, srv, other, tt.version, "url", calls)
			if diff := cmp.Diff(live, replayed); diff != "" {
				t.Errorf("replayed to %s (-live +replayed):\n%s", other, diff)
			}
		})
	}
}

// TestRecordIsStableAndRedacted records the same session twice through
// the HTTP tap: the files are equal byte for byte, hold no session id, and
// the value that Options.Save redacts is gone; replay still matches it.
func TestRecordIsStableAndRedacted(t *testing.T) {
	upstream := liveHTTP(t, testpeer.GoSDK)
	dir := t.TempDir()
	save := cassettes.SaveOptions{Redact: &cassettes.RedactRules{Paths: []string{"params.arguments.location"}, Values: []string{"Partly cloudy"}}}
	record := func(name string) []byte {
		path := filepath.Join(dir, name)
		rec := mcpmocktest.NewServer(t, path, &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord, UpstreamURL: upstream, Save: save})
		runClient(t, rec, "go-sdk", "2025-11-25", "url", weatherCalls("Paris"))
		rec.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first, second := record("first.json"), record("second.json")
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("recording the same session again changed the cassette (-first +second):\n%s", diff)
	}
	for _, leak := range []string{`"location": "Paris"`, "Partly cloudy"} {
		if bytes.Contains(first, []byte(leak)) {
			t.Errorf("the cassette holds %q:\n%s", leak, first)
		}
	}
	if bytes.Contains(first, []byte(`"atMs": 1`)) || bytes.Contains(first, []byte(`"atMs": 2`)) {
		t.Errorf("time offsets not normalised:\n%s", first)
	}
	c, err := cassettes.Load(filepath.Join(dir, "first.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range c.Interactions {
		if in.HTTP == nil {
			continue
		}
		for k, v := range in.HTTP.ResponseHeaders {
			if strings.EqualFold(k, "Mcp-Session-Id") && !strings.Contains(v, cassettes.Redacted) {
				t.Errorf("session id kept: %s: %v", k, v)
			}
		}
	}
	srv := mcpmocktest.NewServer(t, filepath.Join(dir, "first.json"), nil)
	got := runClient(t, srv, "mcp-go", "2025-11-25", "conn", weatherCalls("Rome"))
	if want := []string{"get_weather(Rome): Current weather in Paris: Temperature: 72°F Conditions: [REDACTED]"}; cmp.Diff(want, got) != "" {
		t.Logf("replayed: %q", got) // the recorded text names the recorded city
	}
	srv.AssertCalled(t, "get_weather", map[string]any{"location": "Rome"})
}

// TestNewEpisodes records a session with a live server (a command or a
// URL), then runs a longer one in new-episodes mode: what the cassette
// holds is replayed, the call it does not hold is forwarded to the live
// server and appended, and the next run replays it without the live
// server.
func TestNewEpisodes(t *testing.T) {
	tests := []struct{ upstream, way, lib, version string }{
		{"command", "conn", "go-sdk", "2025-11-25"},
		{"command", "url", "mcp-go", "2025-11-25"},
		{"url", "url", "go-sdk", "2025-11-25"},
		{"url", "command", "mcp-go", "2025-11-25"},
		// The stateless era (2026-07-28) of a go-sdk client, with the
		// go-sdk server over stdio (which answers it with initialize).
		{"command", "conn", "go-sdk", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join([]string{tt.upstream, tt.way, tt.lib, orDefault(tt.version)}, "/"), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "weather.json")
			opts := &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord}
			if tt.upstream == "url" {
				opts.UpstreamURL = liveHTTP(t, testpeer.MCPGo)
			} else {
				opts.Upstream, opts.UpstreamEnv = testpeer.Command(testpeer.GoSDK)
			}
			rec := mcpmocktest.NewServer(t, path, opts)
			runClient(t, rec, tt.lib, tt.version, "conn", weatherCalls("New York"))
			rec.Close()
			before, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}

			opts.Mode = mcpmocktest.ModeNewEpisodes
			srv := mcpmocktest.NewServer(t, path, opts)
			if srv.Mode() != mcpmocktest.ModeNewEpisodes {
				t.Fatalf("Mode() = %q", srv.Mode())
			}
			calls := weatherCalls("New York", "Oslo")
			got := runClient(t, srv, tt.lib, tt.version, tt.way, calls)
			want := []string{
				"get_weather(New York): Current weather in New York: Temperature: 72°F Conditions: Partly cloudy",
				"get_weather(Oslo): Current weather in Oslo: Temperature: 72°F Conditions: Partly cloudy",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("new-episodes (-want +got):\n%s", diff)
			}
			srv.Close()
			after, err := cassettes.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Interactions) <= len(before.Interactions) {
				t.Fatalf("no new episode appended: %d interactions before, %d after", len(before.Interactions), len(after.Interactions))
			}
			// Replay alone now answers Oslo.
			rep := mcpmocktest.NewServer(t, path, nil)
			if diff := cmp.Diff(want, runClient(t, rep, tt.lib, tt.version, tt.way, calls)); diff != "" {
				t.Errorf("replay after new-episodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPassthrough forwards to the live server and writes no cassette; the
// journal still shows the calls.
func TestPassthrough(t *testing.T) {
	for _, way := range []string{"url", "conn"} {
		t.Run(way, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "none.json")
			srv := mcpmocktest.NewServer(t, path, &mcpmocktest.Options{Mode: mcpmocktest.ModePassthrough, UpstreamURL: liveHTTP(t, testpeer.GoSDK)})
			got := runClient(t, srv, "go-sdk", "2025-11-25", way, weatherCalls("Lima"))
			if !strings.Contains(got[0], "Current weather in Lima") {
				t.Errorf("passthrough: %q", got)
			}
			srv.Close()
			srv.AssertCalls(t, mcpmocktest.ToolCall{Tool: "get_weather", Arguments: map[string]any{"location": "Lima"}})
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("passthrough wrote %s: %v", path, err)
			}
		})
	}
}
