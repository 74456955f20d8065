// Package mcpmocktest runs an MCP replay server inside a Go test, the way
// net/http/httptest runs an HTTP server: one line starts it for the test's
// lifetime, the client under test connects to it, and a request that the
// cassette does not hold fails the test with the closest recorded request
// and a diff.
//
// A test of an MCP client, hermetic (no server, no network, no secrets):
//
//	func TestMain(m *testing.M) {
//		mcpmocktest.Main() // only needed for srv.Command()
//		os.Exit(m.Run())
//	}
//
//	func TestWeather(t *testing.T) {
//		srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{
//			Upstream: []string{"go", "run", "./server"}, // recorded with -mcpmock.record
//		})
//
//		// The client under test connects through one of the ways in:
//		r, w := srv.Conn() // in-process pipes, no socket
//		client := mcp.NewClient(&mcp.Implementation{Name: "weather-client", Version: "1.0.0"}, nil)
//		cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, nil)
//		// ... or &mcp.StreamableClientTransport{Endpoint: srv.URL()} (Streamable HTTP on loopback)
//		// ... or argv, env := srv.Command() (a stdio server process: the test binary itself)
//		// ... with mcp-go: transport.NewIO(r, w, nil), transport.NewStreamableHTTP(srv.URL()),
//		//     transport.NewStdio(argv[0], env, argv[1:]...)
//		if err != nil {
//			t.Fatal(err)
//		}
//		defer cs.Close()
//		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
//			Name: "get_weather", Arguments: map[string]any{"location": "New York"}})
//		// ...
//
//		// What the client did:
//		srv.AssertCalled(t, "get_weather", map[string]any{"location": "New York"})
//		if n := srv.CallCount("get_weather"); n != 1 { ... }
//	}
//
// # Ways in
//
// Each connection is a new MCP session with its own replay state; every
// protocol era works through each (the 2026-07-28 server/discover probe and
// the stateful initialize of 2025-11-25 and earlier, whatever the recording
// spoke).
//
//   - Conn returns an in-process reader and writer of newline-delimited
//     JSON-RPC, for the go-sdk's mcp.IOTransport and mcp-go's transport.NewIO.
//   - URL returns a Streamable HTTP endpoint on 127.0.0.1 (httptest).
//   - Command returns the argv and environment of a stdio server for clients
//     that only start processes: the test binary re-executes itself, and
//     Main, called from TestMain, serves the cassette with the same options.
//     No mcpmock binary needs to be installed.
//
// # Failing well
//
// A request that matches nothing is answered with a JSON-RPC error (as
// mcpmock replay does), and the test fails with the explanation: the method
// and tool, the closest recorded request, the difference (-recorded +live)
// and a hint. Options.AllowMisses turns this off, Options.FailOnUnused also
// fails the test for recorded requests that no session used, and
// Options.Strict makes each recorded interaction answer once. Misses in
// Command processes are reported when the test ends.
//
// When ignoring what differs would accept the request, the hint gives the
// rule, as the cassette's "match" and as Options.Matcher
// (matcher.WithConfig); when what differs is what tells the recorded calls
// apart, or no rule would accept the request, it says that the call was
// not recorded and how to record it (MCPMOCK_RECORD=new-episodes). What the
// server reports or logs, even from a session or at cleanup, starts with
// the file and line of the test's NewServer call; an assertion's failure,
// with the assertion's line.
//
// # Replay options
//
// Options carries what mcpmock replay's flags set: OverlayFiles and
// Overlays (scripted behaviour, as --overlay), Seed, Latency, PageSize and
// NoSchemaValidation. For anything else, build an engine with replayer.New
// and serve it to the client with Pipe:
//
//	e, _ := replayer.New(c, &replayer.Options{ReplyTimeout: time.Second})
//	r, w := mcpmocktest.Pipe(t, e)
//
// # Recording
//
// With MCPMOCK_RECORD=1 in the environment (or -mcpmock.record on the go
// test command line of a package that imports mcpmocktest: other packages'
// test binaries do not know the flag, so across ./... use the variable) a
// NewServer with a live server in its options
// (Options.Upstream, a stdio server command, or Options.UpstreamURL, a
// Streamable HTTP endpoint) records instead of replaying: the tap forwards
// the client's traffic to the live server unchanged (URL through the HTTP
// tap; Conn and Command through the stdio tap, or a bridge to the URL), and
// when the test ends the sessions are written to the cassette, one after
// the other, redacted and normalised as mcpmock record writes them
// (Options.Save), so that recording the same session again changes nothing:
//
//	go test ./... -run TestWeather -mcpmock.record
//	go test ./... -mcpmock.mode=once          # record only the cassettes that do not exist
//	go test ./... -mcpmock.mode=new-episodes  # replay, forward what misses, append it
//
// Options.Mode sets a server's mode when the command line says nothing
// (ModeOnce records a missing cassette on the first run). ModeNewEpisodes
// replays what the cassette holds, forwards a request that matches nothing
// to the live server and appends the answer to the cassette when the test
// ends; ModePassthrough forwards everything and writes nothing. The modes
// are decided by the table of cassettes.Decide, as for mcpmock replay
// --mode. Without the flag or the variable, tests never start the upstream
// and never touch the network.
//
// # Scripting from Go
//
// Stubs lay scripted answers and faults over a recording, as an overlay of
// mcpmock replay does (they become its scripted interactions):
//
//	srv := mcpmocktest.NewServer(t, "testdata/weather.json", &mcpmocktest.Options{Stubs: []*mcpmocktest.Stub{
//		mcpmocktest.OnCall("get_weather").Nth(3).ReturnToolError("API rate limit exceeded"),
//		mcpmocktest.OnCall("get_weather").WithArgs(map[string]any{"location": "Paris"}).Delay(time.Second).Return("Sunny"),
//		mcpmocktest.OnCall("get_forecast").ReturnError(-32602, "unknown location"),
//	}})
//
// and NewCassette writes a whole cassette in Go for tests that need no
// recording:
//
//	c := mcpmocktest.NewCassette().
//		Tool("get_weather", `{"type":"object","properties":{"location":{"type":"string"}}}`).
//		Call("get_weather", map[string]any{"location": "Paris"}).Return("Sunny, 22°C").
//		Build()
//	srv := mcpmocktest.NewServerFromCassette(t, c, nil)
//
// # Cost
//
// Starting a server, connecting a go-sdk client over Conn, one call and
// closing take well under a millisecond (BenchmarkStartConnectCallClose), so
// a thousand such tests take about a second. Close, run by t.Cleanup, ends
// every session and waits for its goroutines.
package mcpmocktest
