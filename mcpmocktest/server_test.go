package mcpmocktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

const weatherCassette = "testdata/weather.json"

var weatherWant = []string{
	"get_weather(New York): Current weather in New York: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(London): Current weather in London: Temperature: 72°F Conditions: Partly cloudy",
	"get_weather(Atlantis): tool error: Failed to fetch weather data: API rate limit exceeded",
}

// TestWaysIn replays the weather cassette to go-sdk and mcp-go clients in
// both eras through each way in, and checks the journal.
func TestWaysIn(t *testing.T) {
	for _, lib := range libraries {
		for _, version := range eras {
			for _, way := range waysIn {
				name := fmt.Sprintf("%s/%s/%s", lib, orDefault(version), way)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					srv := mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{FailOnUnused: true})
					got := runClient(t, srv, lib, version, way, weatherCalls("New York", "London", "Atlantis"))
					if diff := cmp.Diff(weatherWant, got); diff != "" {
						t.Errorf("results (-want +got):\n%s", diff)
					}
					srv.AssertCalls(t,
						mcpmocktest.ToolCall{Tool: "get_weather", Arguments: map[string]any{"location": "New York"}},
						mcpmocktest.ToolCall{Tool: "get_weather", Arguments: `{"location":"London"}`},
						mcpmocktest.ToolCall{Tool: "get_weather", Arguments: map[string]string{"location": "Atlantis"}},
					)
					srv.AssertCalled(t, "get_weather", map[string]any{"location": "London"})
					srv.AssertNotCalled(t, "echo")
					if n := srv.CallCount("get_weather"); n != 3 {
						t.Errorf("CallCount(get_weather) = %d, want 3", n)
					}
				})
			}
		}
	}
}

func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}

// fakeT captures the failures that a Server reports, to test them: what
// Errorf says, and what is written to Output (where a Server writes what it
// reports at the NewServer line).
type fakeT struct {
	testing.TB
	mu     sync.Mutex // guards errs and failed
	errs   []string
	failed bool
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs, f.failed = append(f.errs, fmt.Sprintf(format, args...)), true
}

func (f *fakeT) Fail() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
}

func (f *fakeT) Output() io.Writer { return fakeOutput{f} }

type fakeOutput struct{ f *fakeT }

func (o fakeOutput) Write(p []byte) (int, error) {
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	o.f.errs = append(o.f.errs, strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (f *fakeT) failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

// TestMissFailsTheTest: a call with an unrecorded argument fails the test
// with the closest recorded call and a diff, naming the test's line, through
// each way in.
func TestMissFailsTheTest(t *testing.T) {
	for _, lib := range libraries {
		for _, way := range waysIn {
			t.Run(lib+"/"+way, func(t *testing.T) {
				t.Parallel()
				ft := &fakeT{TB: t}
				srv := mcpmocktest.NewServer(ft, weatherCassette, nil)
				got := runClient(t, srv, lib, "", way, weatherCalls("Paris"))
				if len(got) != 1 || !strings.Contains(got[0], "error") || !strings.Contains(got[0], "no recorded tools/call") {
					t.Errorf("the client got %q, want the miss's JSON-RPC error", got)
				}
				srv.Close()
				errs := ft.failures()
				if len(errs) != 1 {
					t.Fatalf("got %d failures, want 1: %q", len(errs), errs)
				}
				for _, want := range []string{
					"server_test.go:", // the test's line that made the server
					`no recorded tools/call of tool "get_weather" matches`,
					`closest is interaction 2`,
					`(-recorded +live)`,
					`-`, `"New York"`, `+`, `"Paris"`,
				} {
					if !strings.Contains(errs[0], want) {
						t.Errorf("the failure does not contain %q:\n%s", want, errs[0])
					}
				}
				// The journal holds the miss.
				calls := srv.Calls()
				if len(calls) != 1 || !calls[0].Missed || calls[0].Tool != "get_weather" {
					t.Errorf("Calls() = %+v, want one missed get_weather", calls)
				}
			})
		}
	}
}

// TestAllowMisses: with AllowMisses the client gets the error and the test
// does not fail.
func TestAllowMisses(t *testing.T) {
	ft := &fakeT{TB: t}
	srv := mcpmocktest.NewServer(ft, weatherCassette, &mcpmocktest.Options{AllowMisses: true})
	runClient(t, srv, "go-sdk", "", "conn", weatherCalls("Paris"))
	srv.Close()
	if errs := ft.failures(); len(errs) != 0 {
		t.Errorf("failures: %q", errs)
	}
}

// TestFailOnUnused reports each recorded call never made, for sessions in
// this process and in Command processes alike.
func TestFailOnUnused(t *testing.T) {
	for _, way := range waysIn {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			ft := &fakeT{TB: t}
			srv := mcpmocktest.NewServer(ft, weatherCassette, &mcpmocktest.Options{FailOnUnused: true})
			runClient(t, srv, "go-sdk", "2025-11-25", way, weatherCalls("London"))
			srv.Close()
			errs := ft.failures()
			want := []string{"interaction 2 was never used: tools/call get_weather {\"location\":\"New York\"}",
				"interaction 4 was never used: tools/call get_weather {\"location\":\"Atlantis\"}"}
			if len(errs) != len(want) {
				t.Fatalf("failures %q, want %d", errs, len(want))
			}
			for i := range want {
				if !strings.Contains(errs[i], want[i]) {
					t.Errorf("failure %d = %q, want it to contain %q", i, errs[i], want[i])
				}
			}
		})
	}
}

// TestAssertionsReportDiffs: the journal helpers fail with readable diffs.
func TestAssertionsReportDiffs(t *testing.T) {
	srv := mcpmocktest.NewServer(t, weatherCassette, nil)
	runClient(t, srv, "go-sdk", "", "conn", weatherCalls("New York", "London"))
	ft := &fakeT{TB: t}
	srv.AssertCalled(ft, "get_weather", map[string]any{"location": "Londres"})
	srv.AssertCalls(ft, mcpmocktest.ToolCall{Tool: "get_weather", Arguments: map[string]any{"location": "New York"}})
	srv.AssertNotCalled(ft, "get_weather")
	srv.AssertCalled(ft, "echo", nil)
	errs := ft.failures()
	if len(errs) != 4 {
		t.Fatalf("failures %q, want 4", errs)
	}
	for i, want := range []string{
		`get_weather was not called with {"location":"Londres"}`,
		`tool calls (-want +got)`,
		`get_weather was called 2 times, want none`,
		`echo was never called`,
	} {
		if !strings.Contains(errs[i], want) {
			t.Errorf("failure %d = %q, want it to contain %q", i, errs[i], want)
		}
	}
	if !strings.Contains(errs[0], `-`) || !strings.Contains(errs[0], `"Londres"`) || !strings.Contains(errs[0], `+`) {
		t.Errorf("AssertCalled shows no diff:\n%s", errs[0])
	}
	if got, want := srv.CallCounts(), map[string]int{"get_weather": 2}; !cmp.Equal(got, want) {
		t.Errorf("CallCounts() = %v, want %v", got, want)
	}
}

// TestStubs lays stubs over the recording.
func TestStubs(t *testing.T) {
	for _, lib := range libraries {
		for _, way := range waysIn {
			t.Run(lib+"/"+way, func(t *testing.T) {
				t.Parallel()
				srv := mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{
					mcpmocktest.OnCall("get_weather").WithArgs(map[string]any{"location": "London"}).Nth(2).
						ReturnToolError("Failed to fetch weather data: API rate limit exceeded"),
					mcpmocktest.OnCall("get_weather").WithArgs(`{"location":"Paris"}`).Return("Sunny", "22°C"),
					mcpmocktest.OnCall("get_weather").WithArgs(`{"location":"Oslo"}`).ReturnError(-32602, "unknown location Oslo"),
					mcpmocktest.OnCall("echo").Times(1).Return("stubbed echo"),
				}})
				got := runClient(t, srv, lib, "", way, append(weatherCalls("London", "London", "London", "Paris", "Oslo"),
					call{"echo", map[string]any{"text": "hi"}}))
				want := []string{
					"get_weather(London): Current weather in London: Temperature: 72°F Conditions: Partly cloudy",
					"get_weather(London): tool error: Failed to fetch weather data: API rate limit exceeded",
					"get_weather(London): Current weather in London: Temperature: 72°F Conditions: Partly cloudy",
					"get_weather(Paris): Sunny 22°C",
					"get_weather(Oslo): error: ",
					"echo: stubbed echo",
				}
				if len(got) != len(want) {
					t.Fatalf("got %q", got)
				}
				for i := range want {
					if !strings.HasPrefix(got[i], want[i]) {
						t.Errorf("result %d = %q, want %q", i, got[i], want[i])
					}
				}
				if !strings.Contains(got[4], "unknown location Oslo") {
					t.Errorf("the scripted error is %q", got[4])
				}
			})
		}
	}
}

// TestRecordThenReplay records a live go-sdk server through Conn and
// Command in record mode, then replays what was recorded.
func TestRecordThenReplay(t *testing.T) {
	for _, way := range []string{"conn", "command"} {
		for _, lib := range libraries {
			t.Run(lib+"/"+way, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "testdata", "recorded.json")
				argv, env := testpeer.Command(testpeer.GoSDK)
				opts := &mcpmocktest.Options{Mode: mcpmocktest.ModeRecord, Upstream: argv, UpstreamEnv: env,
					Meta: cassettes.Meta{Server: []string{"testpeer gosdk"}}}
				rec := mcpmocktest.NewServer(t, path, opts)
				if rec.Mode() != mcpmocktest.ModeRecord {
					t.Fatalf("Mode() = %q", rec.Mode())
				}
				live := runClient(t, rec, lib, "", way, weatherCalls("Paris", "Atlantis"))
				rec.AssertCalled(t, "get_weather", map[string]any{"location": "Paris"})
				rec.Close()
				c, err := cassettes.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if c.Meta.Server[0] != "testpeer gosdk" || len(c.Interactions) < 3 {
					t.Errorf("recorded cassette: meta %+v, %d interactions", c.Meta, len(c.Interactions))
				}

				// Replay (the default mode) gives the same results.
				srv := mcpmocktest.NewServer(t, path, &mcpmocktest.Options{Upstream: []string{"/nonexistent"}})
				if srv.Mode() != mcpmocktest.ModeReplay {
					t.Fatalf("Mode() = %q", srv.Mode())
				}
				replayed := runClient(t, srv, lib, "", way, weatherCalls("Paris", "Atlantis"))
				if diff := cmp.Diff(live, replayed); diff != "" {
					t.Errorf("replayed results (-live +replayed):\n%s", diff)
				}
				if !strings.Contains(live[1], "tool error") {
					t.Errorf("live results %q", live)
				}
			})
		}
	}
}

// TestOnce records a missing cassette, then replays it.
func TestOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "once.json")
	argv, env := testpeer.Command(testpeer.MCPGo)
	opts := &mcpmocktest.Options{Mode: mcpmocktest.ModeOnce, Upstream: argv, UpstreamEnv: env}
	first := mcpmocktest.NewServer(t, path, opts)
	if first.Mode() != mcpmocktest.ModeRecord {
		t.Fatalf("first Mode() = %q, want record", first.Mode())
	}
	live := runClient(t, first, "go-sdk", "2025-11-25", "conn", weatherCalls("Rome"))
	first.Close()
	second := mcpmocktest.NewServer(t, path, opts)
	if second.Mode() != mcpmocktest.ModeReplay {
		t.Fatalf("second Mode() = %q, want replay", second.Mode())
	}
	if diff := cmp.Diff(live, runClient(t, second, "go-sdk", "2025-11-25", "conn", weatherCalls("Rome"))); diff != "" {
		t.Errorf("(-live +replayed):\n%s", diff)
	}
}

// TestBuilder serves a cassette written in Go to both libraries in both
// eras.
func TestBuilder(t *testing.T) {
	c := mcpmocktest.NewCassette().
		ServerInfo("weather", "2.0.0").
		Tool("get_weather", `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`).
		Call("get_weather", map[string]any{"location": "Paris"}).Return("Sunny, 22°C").
		Call("get_weather", map[string]any{"location": "Atlantis"}).ReturnToolError("API rate limit exceeded").
		Call("get_weather", map[string]any{"location": "Nowhere"}).ReturnError(-32602, "unknown location").
		Call("get_weather", json.RawMessage(`{"location":"Paris","units":"F"}`)).ReturnResult(map[string]any{
		"content": []any{map[string]any{"type": "text", "text": "Sunny, 72°F"}}}).
		Build()
	for _, lib := range libraries {
		for _, version := range eras {
			for _, way := range waysIn {
				t.Run(lib+"/"+orDefault(version)+"/"+way, func(t *testing.T) {
					t.Parallel()
					srv := mcpmocktest.NewServerFromCassette(t, c, &mcpmocktest.Options{FailOnUnused: true})
					got := runClient(t, srv, lib, version, way, []call{
						{"get_weather", map[string]any{"location": "Paris"}},
						{"get_weather", map[string]any{"location": "Atlantis"}},
						{"get_weather", map[string]any{"location": "Nowhere"}},
						{"get_weather", map[string]any{"location": "Paris", "units": "F"}},
					})
					want := []string{
						"get_weather(Paris): Sunny, 22°C",
						"get_weather(Atlantis): tool error: API rate limit exceeded",
						"get_weather(Nowhere): error: ",
						"get_weather(Paris): Sunny, 72°F",
					}
					if len(got) != len(want) {
						t.Fatalf("got %q", got)
					}
					for i := range want {
						if !strings.HasPrefix(got[i], want[i]) {
							t.Errorf("result %d = %q, want %q", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestStubNotifyAndDelay: a stub's list_changed notification reaches the
// client before the answer, and its delay holds the answer back.
func TestStubNotifyAndDelay(t *testing.T) {
	const delay = 30 * time.Millisecond
	srv := mcpmocktest.NewServer(t, weatherCassette, &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{
		mcpmocktest.OnCall("add_city").Delay(delay).Return("added").NotifyToolsChanged(),
	}})
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	r, w := srv.Conn()
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	start := time.Now()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_city", Arguments: map[string]any{"name": "Oslo"}})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("answered after %v, want at least %v", elapsed, delay)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "added" {
		t.Errorf("result %q", text)
	}
	select {
	case <-changed:
	case <-t.Context().Done():
		t.Fatal("no tools/list_changed")
	}
}

// numberAsText finds cmp's rendering of a json.Number (s"2").
var numberAsText = regexp.MustCompile(`(^|\W)s"`)

// TestDiffsShowNumbers: the diffs of a miss, of AssertCalled and of
// AssertCalls show numbers as numbers (int64(3), not s"3"), and AssertCalls
// shows the calls as ToolCall values, not as a type of mcpmocktest's
// insides.
func TestDiffsShowNumbers(t *testing.T) {
	c := mcpmocktest.NewCassette().
		Tool("add", nil).
		Call("add", map[string]any{"a": 1, "b": 2}).Return("3").
		Build()
	ft := &fakeT{TB: t}
	srv := mcpmocktest.NewServerFromCassette(ft, c, nil)
	runClient(t, srv, "go-sdk", "", "conn", []call{{"add", map[string]any{"a": 1, "b": 3}}})
	srv.AssertCalled(ft, "add", map[string]any{"a": 1, "b": 2})
	srv.AssertCalls(ft, mcpmocktest.ToolCall{Tool: "add", Arguments: `{"a":1,"b":2}`})
	srv.Close()
	errs := ft.failures()
	if len(errs) != 3 {
		t.Fatalf("failures %q, want the miss and two assertions", errs)
	}
	for i, what := range []string{"the miss", "AssertCalled", "AssertCalls"} {
		if numberAsText.MatchString(errs[i]) {
			t.Errorf("%s shows numbers as text:\n%s", what, errs[i])
		}
		for _, want := range []string{"int64(2)", "int64(3)", "int64(1)"} {
			if !strings.Contains(errs[i], want) {
				t.Errorf("%s does not show %s:\n%s", what, want, errs[i])
			}
		}
	}
	if strings.Contains(errs[2], "view") || !strings.Contains(errs[2], "[]mcpmocktest.ToolCall{") {
		t.Errorf("AssertCalls does not show ToolCall values:\n%s", errs[2])
	}
}

// TestMissHintSpeaksGo: the hint of a miss in a Go test names what a Go
// test has (the cassette's "match" rule, Options.Matcher, MCPMOCK_RECORD),
// never mcpmock's flags, and does not offer to ignore the argument that
// tells the recorded calls apart: the call was not recorded.
func TestMissHintSpeaksGo(t *testing.T) {
	add := mcpmocktest.NewCassette().Tool("add", nil).Call("add", map[string]any{"a": 1, "b": 2}).Return("3").Build()
	addFile := filepath.Join(t.TempDir(), "add.json")
	if err := cassettes.Save(addFile, add); err != nil {
		t.Fatal(err)
	}
	live := &mcpmocktest.Options{Upstream: []string{"/nonexistent/server"}} // replay never starts it
	tests := []struct {
		name     string
		server   func(t testing.TB) *mcpmocktest.Server
		way      string
		call     call
		want     []string
		unwanted []string
	}{
		{"the argument tells the calls apart", func(t testing.TB) *mcpmocktest.Server { return mcpmocktest.NewServer(t, weatherCassette, nil) },
			"conn", call{"get_weather", map[string]any{"location": "Paris"}},
			[]string{"this call was not recorded: arguments.location tells the recorded calls apart, so ignoring it would answer with another call's answer; record it: ",
				"name the live server in Options.Upstream or Options.UpstreamURL, then MCPMOCK_RECORD=new-episodes go test -run '^TestMissHintSpeaksGo$' appends it"},
			[]string{"to accept this", "Options.Matcher"}},
		{"a cassette built in Go", func(t testing.TB) *mcpmocktest.Server { return mcpmocktest.NewServerFromCassette(t, add, nil) },
			"conn", call{"add", map[string]any{"a": 1, "b": 4}},
			[]string{`to accept this, ignore arguments.b: Options.Matcher: matcher.WithConfig(nil, &matcher.Config{Ignore: []string{"arguments.b"}}); if the call is new, add it to the cassette (CassetteBuilder.Call) or script it (Options.Stubs)`},
			[]string{`"match"`}},
		{"a cassette file and a live server", func(t testing.TB) *mcpmocktest.Server { return mcpmocktest.NewServer(t, addFile, live) },
			"url", call{"add", map[string]any{"a": 1, "b": 4}},
			[]string{`to accept this, ignore arguments.b: "match": {"ignore":["arguments.b"]} in the cassette, or Options.Matcher: matcher.WithConfig(nil, &matcher.Config{Ignore: []string{"arguments.b"}}); if the call is new, record it: MCPMOCK_RECORD=new-episodes go test -run '^TestMissHintSpeaksGo$' appends it to the cassette, MCPMOCK_RECORD=1 go test -run '^TestMissHintSpeaksGo$' records the cassette again`},
			nil},
		{"over the test's own matcher", func(t testing.TB) *mcpmocktest.Server {
			return mcpmocktest.NewServerFromCassette(t, add, &mcpmocktest.Options{Matcher: matcher.Default()})
		},
			"conn", call{"add", map[string]any{"a": 1, "b": 4}},
			[]string{`Options.Matcher: matcher.WithConfig(Options.Matcher, &matcher.Config{Ignore: []string{"arguments.b"}})`},
			nil},
		{"a Command process", func(t testing.TB) *mcpmocktest.Server { return mcpmocktest.NewServer(t, addFile, live) },
			"command", call{"add", map[string]any{"a": 1, "b": 4}},
			[]string{`to accept this, ignore arguments.b: "match": {"ignore":["arguments.b"]} in the cassette; if the call is new, record it: MCPMOCK_RECORD=new-episodes`},
			[]string{"Options.Matcher"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := &fakeT{TB: t}
			srv := tt.server(ft)
			runClient(t, srv, "go-sdk", "", tt.way, []call{tt.call})
			srv.Close()
			errs := ft.failures()
			if len(errs) != 1 {
				t.Fatalf("failures %q, want the miss", errs)
			}
			for _, want := range tt.want {
				if !strings.Contains(errs[0], want) {
					t.Errorf("the failure does not say %q:\n%s", want, errs[0])
				}
			}
			for _, unwanted := range append(tt.unwanted, "--match-ignore") {
				if strings.Contains(errs[0], unwanted) {
					t.Errorf("the failure says %q:\n%s", unwanted, errs[0])
				}
			}
		})
	}
}
