package record_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/examples/weather"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

// serverEnv makes this test binary the live weather server (the upstream
// that record mode starts).
const serverEnv = "RECORD_EXAMPLE_WEATHER_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		if err := weather.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	mcpmocktest.Main()
	os.Exit(m.Run())
}

// liveServer is the options that name the live server to record.
func liveServer(t *testing.T) *mcpmocktest.Options {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &mcpmocktest.Options{
		Upstream:    []string{exe, "-test.run=^$"},
		UpstreamEnv: []string{serverEnv + "=1"},
		Meta:        cassettes.Meta{Server: []string{"go", "run", "./examples/weather/server"}},
	}
}

var want = []string{
	"get_weather(New York): Current weather in New York: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(London): Current weather in London: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(Atlantis): tool error: Failed to fetch weather data: API rate limit exceeded",
}

// TestWeatherClient replays testdata/weather.json; with -mcpmock.record (or
// MCPMOCK_RECORD=1) it records it again from the live server instead. The
// test body is the same in both modes.
func TestWeatherClient(t *testing.T) {
	srv := mcpmocktest.NewServer(t, "testdata/weather.json", liveServer(t))
	r, w := srv.Conn()
	got, err := weather.RunClient(t.Context(), r, w, weather.ClientOptions{Library: weather.MCPGo})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client lines (-want +got):\n%s", diff)
	}
	srv.AssertCalled(t, weather.ToolName, map[string]any{"location": "Atlantis"})
	t.Logf("mode %s", srv.Mode())
}

// TestRecordMode records into a fresh file with the mode set in the
// options (what -mcpmock.record does for every server), then replays that
// file to a client of the other library and the other era.
func TestRecordMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weather.json")
	opts := liveServer(t)
	opts.Mode = mcpmocktest.ModeRecord
	rec := mcpmocktest.NewServer(t, path, opts)
	r, w := rec.Conn()
	live, err := weather.RunClient(t.Context(), r, w, weather.ClientOptions{Library: weather.GoSDK})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close() // writes the cassette (t.Cleanup would, at the end of the test)
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 4 {
		t.Errorf("recorded %d interactions, want 4 (server/discover and three calls)", len(c.Interactions))
	}

	// The mode on the command line (MCPMOCK_RECORD=1 go test ./...) wins
	// over Options.Mode, so this server names the live server too: a run
	// that records every cassette records this one again instead of failing.
	opts = liveServer(t)
	opts.Mode, opts.FailOnUnused = mcpmocktest.ModeReplay, true
	srv := mcpmocktest.NewServer(t, path, opts)
	r, w = srv.Conn()
	replayed, err := weather.RunClient(t.Context(), r, w, weather.ClientOptions{Library: weather.MCPGo, ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live, replayed); diff != "" {
		t.Errorf("(-live +replayed):\n%s", diff)
	}
}
