package replayer

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// BenchmarkReplayScattered is the stdio front end's work for a call on a
// cassette of K calls of one tool, each recorded once with its own
// argument, the live calls spread over the whole cassette (the argument of
// call i is i × 7919 mod K), as the growth group of the bench harness
// sends them (`go run ./bench -only growth -growth-only "cassette of K"`).
// On a large cassette each call reads recorded data far from the last
// one's: what it costs more than on a small cassette is cache misses,
// reported as x-of-10.
func BenchmarkReplayScattered(b *testing.B) {
	var base float64
	for _, k := range []int{10, 1000, 100000} {
		e := scatteredEngine(b, k)
		const calls = 64000 // a session's, as the harness sends them
		lines := make([][]byte, calls)
		for i := range lines {
			lines[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i*7919%k)
		}
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			out := &discardTry{}
			ctx := context.Background()
			var conn *conn
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if i%calls == 0 {
					conn = scatteredConn(e, out)
				}
				conn.receive(ctx, lines[i%calls])
			}
			b.StopTimer()
			if want := fmt.Sprintf(`"text":"m%d"`, (b.N-1)%calls*7919%k); !bytes.Contains(out.last, []byte(want)) {
				b.Fatalf("the last answer is %s, want one with %s", out.last, want)
			}
			perCall := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if k == 10 {
				base = perCall
			}
			if base > 0 {
				b.ReportMetric(perCall/base, "x-of-10")
			}
		})
	}
}

// scatteredInitialize is the initialize of scatteredEngine's cassette.
const scatteredInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`

// scatteredConn is a stdio session of e, a scatteredEngine, written to
// out at once, after its initialize and notifications/initialized.
func scatteredConn(e *Engine, out *discardTry) *conn {
	conn := newConn(e, e.newSession(), out)
	conn.try = out
	conn.receive(context.Background(), []byte(scatteredInitialize))
	conn.receive(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return conn
}

// scatteredEngine replays scatteredCassette(k).
func scatteredEngine(tb testing.TB, k int) *Engine {
	tb.Helper()
	e, err := New(scatteredCassette(k), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// scatteredCassette is a cassette of an initialize at 2025-11-25 and k
// calls of one tool, echo, each recorded once with its own argument: the
// text "m" and its number (the call of "mI" at position I+1).
func scatteredCassette(k int) *cassettes.Cassette {
	c := cassettes.New()
	add := func(req, resp string) {
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, Request: []byte(req),
			Response: &cassettes.Message{From: cassettes.FromServer, Message: []byte(resp)}})
	}
	add(scatteredInitialize, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`)
	for i := range k {
		add(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}`, i+1, i))
	}
	return c
}
