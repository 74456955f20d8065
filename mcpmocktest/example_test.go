package mcpmocktest_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/mcpmocktest"
)

// exampleT stands in for the *testing.T that a real test has (examples get
// none): it runs the cleanups when done and prints the first line of each
// failure.
type exampleT struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

func (t *exampleT) Helper()                      {}
func (t *exampleT) Name() string                 { return "TestWeather" }
func (t *exampleT) Cleanup(f func())             { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *exampleT) Logf(string, ...any)          {}
func (t *exampleT) Errorf(f string, args ...any) { t.fail(fmt.Sprintf(f, args...)) }
func (t *exampleT) Fail()                        {}
func (t *exampleT) Output() io.Writer            { return exampleOutput{t} }

// fail prints the first line of a failure, without the file:line of the
// test.
func (t *exampleT) fail(msg string) {
	msg = strings.SplitN(msg, "\n", 2)[0]
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.Contains(msg, "_test.go:") {
		msg = rest
	}
	fmt.Println("FAIL:", msg)
}

// exampleOutput is where a Server writes what it reports at the NewServer
// line: in these examples, only failures.
type exampleOutput struct{ t *exampleT }

func (o exampleOutput) Write(p []byte) (int, error) { o.t.fail(string(p)); return len(p), nil }
func (t *exampleT) Fatalf(f string, args ...any)    { panic(fmt.Sprintf(f, args...)) }
func (t *exampleT) TempDir() string                 { d, _ := os.MkdirTemp("", "example"); return d }
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// callWeather connects a go-sdk client through tr and asks for the weather
// in a location.
func callWeather(tr mcp.Transport, location string) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "weather-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"location": location}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s (isError: %v)\n", res.Content[0].(*mcp.TextContent).Text, res.IsError)
}

// A cassette written in Go, served in-process to a go-sdk client.
func Example() {
	t := &exampleT{} // in a test: the *testing.T
	defer t.done()

	c := mcpmocktest.NewCassette().
		Tool("get_weather", `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`).
		Call("get_weather", map[string]any{"location": "Paris"}).Return("Sunny, 22°C").
		Call("get_weather", map[string]any{"location": "Atlantis"}).ReturnToolError("API rate limit exceeded").
		Build()
	srv := mcpmocktest.NewServerFromCassette(t, c, nil)

	r, w := srv.Conn()
	callWeather(&mcp.IOTransport{Reader: r, Writer: w}, "Paris")
	r, w = srv.Conn()
	callWeather(&mcp.IOTransport{Reader: r, Writer: w}, "Atlantis")
	fmt.Println(srv.CallCounts())
	// Output:
	// Sunny, 22°C (isError: false)
	// API rate limit exceeded (isError: true)
	// map[get_weather:2]
}

// The in-process way in: a pipe pair for the go-sdk's IOTransport (or
// mcp-go's transport.NewIO).
func ExampleServer_Conn() {
	t := &exampleT{}
	defer t.done()

	srv := mcpmocktest.NewServer(t, "testdata/weather.json", nil)
	r, w := srv.Conn()
	callWeather(&mcp.IOTransport{Reader: r, Writer: w}, "London")
	// Output:
	// Current weather in London:
	// Temperature: 72°F
	// Conditions: Partly cloudy (isError: false)
}

// The Streamable HTTP way in, on loopback.
func ExampleServer_URL() {
	t := &exampleT{}
	defer t.done()

	srv := mcpmocktest.NewServer(t, "testdata/weather.json", nil)
	callWeather(&mcp.StreamableClientTransport{Endpoint: srv.URL()}, "Atlantis")
	// Output:
	// Failed to fetch weather data: API rate limit exceeded (isError: true)
}

// The stdio way in, for clients that start a server process: the test
// binary itself, whose TestMain calls mcpmocktest.Main.
func ExampleServer_Command() {
	t := &exampleT{}
	defer t.done()

	srv := mcpmocktest.NewServer(t, "testdata/weather.json", nil)
	argv, env := srv.Command()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	callWeather(&mcp.CommandTransport{Command: cmd}, "New York")
	// Output:
	// Current weather in New York:
	// Temperature: 72°F
	// Conditions: Partly cloudy (isError: false)
}

// A stub over the recording: the second call for London fails.
func ExampleOnCall() {
	t := &exampleT{}
	defer t.done()

	srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{
		mcpmocktest.OnCall("get_weather").WithArgs(map[string]any{"location": "London"}).Nth(2).
			ReturnToolError("Failed to fetch weather data: API rate limit exceeded"),
	}})
	r, w := srv.Conn()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "weather-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	for range 3 {
		res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"location": "London"}})
		fmt.Println("isError:", res.IsError)
	}
	// Output:
	// isError: false
	// isError: true
	// isError: false
}

// A miss fails the test with the closest recorded call and a diff.
func ExampleNewServer_miss() {
	t := &exampleT{}
	defer t.done()

	srv := mcpmocktest.NewServer(t, "testdata/weather.json", nil)
	r, w := srv.Conn()
	callWeather(&mcp.IOTransport{Reader: r, Writer: w}, "Paris")
	// In a test, the failure starts with the file and line of the NewServer
	// call and goes on with the diff of each close candidate:
	//
	//	example_test.go:175: mcpmock: no recorded tools/call of tool "get_weather" matches; ...
	//	interaction 2 (-recorded +live):
	//	  map[string]any{
	//	- 	"arguments": map[string]any{"location": string("New York")},
	//	+ 	"arguments": map[string]any{"location": string("Paris")},
	//	  	"name":      string("get_weather"),
	//	  }
	//
	// The client gets the JSON-RPC error that mcpmock replay sends, whose
	// hint names the command line's flags.

	// Output:
	// FAIL: mcpmock: no recorded tools/call of tool "get_weather" matches; closest is interaction 2: arguments.location: recorded "New York", live "Paris" (this call was not recorded: arguments.location tells the recorded calls apart, so ignoring it would answer with another call's answer; record it: name the live server in Options.Upstream or Options.UpstreamURL, then MCPMOCK_RECORD=new-episodes go test -run '^TestWeather$' appends it to the cassette)
	// error: calling "tools/call": mcpmock: no recorded tools/call of tool "get_weather" matches; closest is interaction 2: arguments.location: recorded "New York", live "Paris" (to accept this, ignore arguments.location: --match-ignore arguments.location, or "match": {"ignore":["arguments.location"]} in the cassette)
}
