package ratelimit

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestClientRetriesRateLimit replays the recorded weather session with the
// overlay that rate-limits the third get_weather call, and proves that the
// client retries it and still gets every answer.
func TestClientRetriesRateLimit(t *testing.T) {
	rec, err := cassettes.Load("testdata/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := cassettes.Load("ratelimit.json")
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	eng, err := replayer.New(rec, &replayer.Options{
		Overlays: []*cassettes.Cassette{overlay},
		OnRequest: func(ev replayer.Event) {
			if ev.Tool != "" {
				calls = append(calls, ev.Tool+" "+string(ev.Arguments))
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	toServer, clientW := io.Pipe()
	clientR, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- eng.Serve(t.Context(), toServer, fromServer); fromServer.Close() }()

	ctx := t.Context()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "retrying-client", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var waited []time.Duration
	r := &Retrier{Session: cs, Backoff: 50 * time.Millisecond, Sleep: func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		return nil
	}}
	var got []int
	for _, loc := range []string{"New York", "London", "New York"} {
		text, attempts, err := r.Weather(ctx, loc)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		if text != "Current weather in "+loc+":\nTemperature: 72°F\nConditions: Partly cloudy" {
			t.Errorf("%s: %q", loc, text)
		}
		got = append(got, attempts)
	}
	cs.Close()
	clientW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 1, 2}, got); diff != "" {
		t.Errorf("attempts per location (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{50 * time.Millisecond}, waited); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	want := []string{
		`get_weather {"location":"New York"}`,
		`get_weather {"location":"London"}`,
		`get_weather {"location":"New York"}`, // rate-limited by the overlay
		`get_weather {"location":"New York"}`, // the retry
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls the server saw (-want +got):\n%s", diff)
	}
}
