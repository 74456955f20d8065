package weather_test

import (
	stdcmp "cmp"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/examples/weather"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

func TestMain(m *testing.M) {
	mcpmocktest.Main() // lets srv.Command() re-execute this test binary as the replay server
	os.Exit(m.Run())
}

// TestClientHermetic runs the weather client against the committed
// recording of the weather server (testdata/weather.json), with no server
// and no network: in-process, as a spawned stdio server, for both client
// libraries and both protocol eras. Record it again with
//
//	go run ./cmd/mcpmock record -c examples/weather/testdata/weather.json -- go run ./examples/weather/server
//
// driven by go run ./examples/weather/client -- <that command>.
func TestClientHermetic(t *testing.T) {
	for _, lib := range []string{weather.GoSDK, weather.MCPGo} {
		for _, version := range []string{"", "2025-11-25"} {
			opts := weather.ClientOptions{Library: lib, ProtocolVersion: version}
			name := lib + "/" + stdcmp.Or(version, "default")
			t.Run(name+"/conn", func(t *testing.T) {
				t.Parallel()
				srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{FailOnUnused: true})
				r, w := srv.Conn()
				got, err := weather.RunClient(t.Context(), r, w, opts)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("client lines (-want +got):\n%s", diff)
				}
				srv.AssertCalls(t,
					mcpmocktest.ToolCall{Tool: weather.ToolName, Arguments: map[string]any{"location": "New York"}},
					mcpmocktest.ToolCall{Tool: weather.ToolName, Arguments: map[string]any{"location": "London"}},
					mcpmocktest.ToolCall{Tool: weather.ToolName, Arguments: map[string]any{"location": "Atlantis"}},
				)
			})
			t.Run(name+"/command", func(t *testing.T) {
				t.Parallel()
				srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{FailOnUnused: true})
				argv, env := srv.Command()
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = append(os.Environ(), env...)
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				r, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				got, err := weather.RunClient(t.Context(), r, w, opts)
				w.Close()
				if werr := cmd.Wait(); werr != nil {
					t.Errorf("replay server: %v", werr)
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("client lines (-want +got):\n%s", diff)
				}
				if n := srv.CallCount(weather.ToolName); n != 3 {
					t.Errorf("%d calls of %s, want 3", n, weather.ToolName)
				}
			})
		}
	}
}

// TestClientSeesRateLimit scripts a failure over the recording: the
// call for London fails with the rate-limit tool error.
func TestClientSeesRateLimit(t *testing.T) {
	srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{
		mcpmocktest.OnCall(weather.ToolName).WithArgs(map[string]any{"location": "London"}).
			ReturnToolError(weather.RateLimitMessage),
	}})
	r, w := srv.Conn()
	got, err := weather.RunClient(t.Context(), r, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := "get_weather(London): tool error: " + weather.RateLimitMessage; got[1] != want {
		t.Errorf("London: got %q, want %q", got[1], want)
	}
}
