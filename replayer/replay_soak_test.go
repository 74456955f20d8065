package replayer

import (
	"bufio"
	"context"
	"flag"
	"io"
	"runtime"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// soak turns on the long runs: 100,000 calls, 64 MiB lines.
var soak = flag.Bool("soak", false, "run the soak tests in full (100,000 calls, 64 MiB lines)")

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoakStdioReplay makes N, then 10N sequential calls to one replay
// session and checks that the heap does not grow with the calls: 10,000
// and 100,000 with -soak, 500 and 5,000 by default.
func TestSoakStdioReplay(t *testing.T) {
	n := 500
	if *soak {
		n = 10000
	}
	const recorded = 10
	c, err := cassettes.Parse("soak.json", []byte(numberedCassette(recorded)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, inR, outW); outW.Close() }()
	br := bufio.NewReader(outR)
	calls := 0
	run := func(k int) {
		for range k {
			i := calls % recorded
			calls++
			if _, err := io.WriteString(inW, numberedCall(itoa(calls), i)+"\n"); err != nil {
				t.Fatal(err)
			}
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if id, text := pairing(t, line); id != itoa(calls) || text != "r"+itoa(i) {
				t.Fatalf("call %d: id %s text %q", calls, id, text)
			}
		}
	}
	run(n)
	h1 := heapAfterGC()
	run(9 * n)
	h10 := heapAfterGC()
	growth := int64(h10) - int64(h1)
	t.Logf("stdio replay: heap %d KiB after %d calls, %d KiB after %d calls: %+d bytes per call", h1>>10, n, h10>>10, 10*n, growth/int64(9*n))
	if growth > 1<<20 {
		t.Errorf("the heap grew by %d KiB over %d calls (%d bytes per call): memory is not flat", growth>>10, 9*n, growth/int64(9*n))
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSoakHTTPReplay is TestSoakStdioReplay over Streamable HTTP, one
// session, one keep-alive connection.
func TestSoakHTTPReplay(t *testing.T) {
	n := 200
	if *soak {
		n = 10000
	}
	const recorded = 10
	srv, h := serveHTTP(t, numberedCassette(recorded), nil)
	u := srv.URL + "/mcp"
	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	calls := 0
	run := func(k int) {
		for range k {
			i := calls % recorded
			calls++
			ex := do(t, "POST", u, numberedCall(itoa(calls), i), hdr)
			body := ex.body
			if ev := events(body); len(ev) > 0 {
				body = ev[len(ev)-1]
			}
			if id, text := pairing(t, body); id != itoa(calls) || text != "r"+itoa(i) {
				t.Fatalf("call %d: id %s text %q", calls, id, text)
			}
		}
	}
	run(n)
	h1 := heapAfterGC()
	run(9 * n)
	h10 := heapAfterGC()
	growth := int64(h10) - int64(h1)
	t.Logf("HTTP replay: heap %d KiB after %d calls, %d KiB after %d calls: %+d bytes per call (%d sessions)", h1>>10, n, h10>>10, 10*n, growth/int64(9*n), h.Sessions())
	if growth > 1<<20 {
		t.Errorf("the heap grew by %d KiB over %d calls (%d bytes per call): memory is not flat", growth>>10, 9*n, growth/int64(9*n))
	}
}
