package replayer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// discardTry is a stream that takes every write at once; it keeps the last.
type discardTry struct{ last []byte }

func (d *discardTry) TryWrite(p []byte) (int, error) {
	d.last = append(d.last[:0], p...)
	return len(p), nil
}
func (d *discardTry) Write(p []byte) (int, error) { return d.TryWrite(p) }
func (d *discardTry) Close() error                { return nil }

// BenchmarkServeLine is the stdio front end's work for one call of a
// 2026-07-28 client, from the line read to the answer written, without the
// system calls: what `mcpmock replay` spends a call beyond its read and
// its write. The cassette is the bench harness's (go run ./bench): 3,000
// calls of one tool by the go-sdk client, 64 distinct arguments in turn,
// replayed in the order they were recorded.
func BenchmarkServeLine(b *testing.B) {
	e, lines := benchSession(b)
	out := &discardTry{}
	var conn *conn
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(lines) == 0 { // a new session, as the harness starts a new process
			conn = newConn(e, e.newSession(), out)
			conn.try = out
		}
		conn.receive(ctx, lines[i%len(lines)])
	}
	b.StopTimer()
	if want := fmt.Sprintf(`"text":"m%d"`, (b.N-1)%len(lines)%benchDistinct); !bytes.Contains(out.last, []byte(want)) {
		b.Fatalf("the last answer is %s, want one with %s", out.last, want)
	}
}

const benchDistinct = 64 // the distinct arguments of benchSession's calls

// benchSession is the bench harness's cassette, and the lines of its
// calls in order (BenchmarkServeLine).
func benchSession(tb testing.TB) (*Engine, [][]byte) {
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	const calls = 3000
	request := func(id, i int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,"name":"echo","arguments":{"text":"m%d"}}}`, id, meta, i%benchDistinct)
	}
	c := cassettes.New()
	lines := make([][]byte, calls)
	for i := range calls {
		c.Interactions = append(c.Interactions, cassettes.Interaction{
			From:    cassettes.FromClient,
			Request: request(i+2, i),
			Response: &cassettes.Message{From: cassettes.FromServer,
				Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1"}},"content":[{"type":"text","text":"m%d"}],"resultType":"complete"}}`, i+2, i%benchDistinct)},
		})
		lines[i] = request(i+2, i)
	}
	e, err := New(c, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return e, lines
}

// TestServeLineAllocates: a call on the stdio front end allocates its
// message's copy (the reader's line is reused for the next), its parse and
// its id's string, which the session and Options.OnRequest may keep as long
// as they like; nothing else: no context, no goroutine, no closure, no
// outlet (there were 15 allocations a call).
func TestServeLineAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	e, lines := benchSession(t)
	out := &discardTry{}
	conn := newConn(e, e.newSession(), out)
	conn.try = out
	ctx := context.Background()
	i := 0
	allocs := testing.AllocsPerRun(500, func() {
		conn.receive(ctx, lines[i])
		i++
	})
	if allocs > 3 {
		t.Errorf("a call allocates %v times, want at most 3", allocs)
	}
	if want := fmt.Sprintf(`"text":"m%d"`, (i-1)%benchDistinct); !bytes.Contains(out.last, []byte(want)) {
		t.Fatalf("the last answer is %s, want one with %s", out.last, want)
	}
}

// BenchmarkHTTPStateless is a 2026-07-28 call on the HTTP front end, as
// the go-sdk client sends it (its metadata headers, _meta in the body),
// handled by the engine's Handler without a network: what the replay adds
// to net/http's own work for a request.
func BenchmarkHTTPStateless(b *testing.B) {
	e, lines := benchSession(b)
	h := e.Handler(nil)
	defer h.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(lines[i%len(lines)]))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set(mcp.HeaderProtocolVersion, mcp.Version20260728)
		r.Header.Set(mcp.HeaderMethod, "tools/call")
		r.Header.Set(mcp.HeaderName, "echo")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
