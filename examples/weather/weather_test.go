package weather_test

import (
	stdcmp "cmp"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpmock/mcpmock/examples/weather"
)

var want = []string{
	"get_weather(New York): Current weather in New York: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(London): Current weather in London: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(Atlantis): tool error: Failed to fetch weather data: API rate limit exceeded",
}

func TestClientAgainstServer(t *testing.T) {
	for _, lib := range []string{weather.GoSDK, weather.MCPGo} {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(lib+"/"+stdcmp.Or(version, "default"), func(t *testing.T) {
				t.Parallel()
				toServerR, toServerW := io.Pipe()
				toClientR, toClientW := io.Pipe()
				errc := make(chan error, 1)
				go func() { errc <- weather.Serve(t.Context(), toServerR, toClientW) }()

				got, err := weather.RunClient(t.Context(), toClientR, toServerW,
					weather.ClientOptions{Library: lib, ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("client lines (-want +got):\n%s", diff)
				}
				// The client closed its end: the server ends cleanly.
				if err := <-errc; err != nil {
					t.Errorf("Serve: %v", err)
				}
			})
		}
	}
}

func TestUnknownLibrary(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	if _, err := weather.RunClient(t.Context(), r, w, weather.ClientOptions{Library: "nope"}); err == nil {
		t.Fatal("RunClient with an unknown library succeeded")
	}
}
