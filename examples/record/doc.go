// Package record shows how a Go test records its own cassette against a
// live MCP server with mcpmocktest, go-vcr style, and replays it on every
// other run.
//
// The test names the live server in Options.Upstream. A normal run replays
// testdata/weather.json and starts no server; a run with the record flag
// starts the server, passes the client's traffic through the tap and writes
// the cassette again:
//
//	go test ./examples/record                     # replay (hermetic)
//	go test ./examples/record -mcpmock.record     # record against the live server
//	MCPMOCK_RECORD=1 go test ./examples/record    # the same, from the environment
//
// Here the live server is the weather example's server run by the test
// binary itself; in a real project it is any stdio MCP server command, such
// as []string{"npx", "-y", "@modelcontextprotocol/server-everything"}.
package record
