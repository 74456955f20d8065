package replayer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
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

// TestServeLineAllocates: a call on the stdio front end allocates nothing:
// the line's copy and its parse, its id a view of the line, are the
// reader's, used again for the next line (borrow), and nothing else is
// made: no context, no goroutine, no closure, no outlet, no map (there were
// 15 allocations a call, then 3, and 4 in a session that had initialized,
// then 1, the id's string; a miss copies the id it keeps,
// TestMissesKeepNotTheirLines).
func TestServeLineAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	stateless, lines := benchSession(t)
	stateful := scatteredEngine(t, 100)
	for _, c := range []struct {
		name  string
		e     *Engine
		first []string // what the client sends before its calls
		call  func(i int) []byte
		want  func(i int) string
	}{
		{"2026-07-28", stateless, nil, func(i int) []byte { return lines[i%len(lines)] },
			func(i int) string { return fmt.Sprintf(`"text":"m%d"`, i%benchDistinct) }},
		{"2025-11-25, initialized", stateful, []string{scatteredInitialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
			func(i int) []byte {
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i%100)
			},
			func(i int) string {
				return fmt.Sprintf(`"id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}`, i+1, i%100)
			}},
	} {
		// The live log on, as `mcpmock replay` runs by default: its lines
		// of the call and of the answer add nothing (there were 63 in
		// all, and 56 at 2025-11-25: the lines, their attributes and
		// records, the redactor's copies, the line's copy and the
		// answer's parse; then 3: the answer's id, parsed to be logged,
		// and the note's text, "replayed #4").
		for _, logged := range []bool{false, true} {
			name, most := c.name, 0.0
			var log bytes.Buffer
			if logged {
				name = c.name + ", logged"
				c.e.opts.Logger = slog.New(livelog.NewTextHandler(&log))
				c.e.shareLines() // as New does for this log
				if c.e.lines == nil {
					t.Fatalf("%s: the log's lines have no memos", c.name)
				}
			}
			t.Run(name, func(t *testing.T) {
				defer func() { c.e.opts.Logger = livelog.Discard }()
				out := &discardTry{}
				conn := newConn(c.e, c.e.newSession(), out)
				conn.try = out
				ctx := context.Background()
				for _, l := range c.first {
					conn.receive(ctx, []byte(l))
				}
				calls := make([][]byte, 700)
				for i := range calls {
					calls[i] = c.call(i)
				}
				log.Grow(1 << 20)
				i := 0
				// The first call of each distinct request makes the
				// memos of its lines (livelog.Memo), once.
				for ; logged && i < 100; i++ {
					conn.receive(ctx, calls[i])
				}
				allocs := testing.AllocsPerRun(500, func() {
					conn.receive(ctx, calls[i])
					i++
				})
				if allocs > most {
					t.Errorf("a call allocates %v times, want at most %v", allocs, most)
				}
				if want := c.want(i - 1); !bytes.Contains(out.last, []byte(want)) {
					t.Fatalf("the last answer is %s, want one with %s", out.last, want)
				}
				if calls, answers := bytes.Count(log.Bytes(), []byte("tools/call echo {")), bytes.Count(log.Bytes(), []byte(" result \"m")); logged && (calls < i || answers < i) {
					t.Errorf("the log has %d lines of calls and %d of answers, want %d each:\n%s", calls, answers, i, log.Bytes()[max(0, log.Len()-400):])
				}
				// Each call's note is whole, though made in a buffer used
				// again: "[replayed #N]".
				if notes := regexp.MustCompile(`\} \[replayed #[1-9][0-9]*\]\n`).FindAll(log.Bytes(), -1); logged && len(notes) < i {
					t.Errorf("the log has %d notes of replayed calls, want %d:\n%s", len(notes), i, log.Bytes()[max(0, log.Len()-400):])
				}
			})
		}
	}
}

// TestBorrowKeepsWhatWaits: a message the session still needs after the
// reader has gone on, a request whose answer waits and a request that
// missed, keeps its memory; the next line, answered at once, does not
// overwrite it (the package's tests overwrite freed memory: poisonFreed).
func TestBorrowKeepsWhatWaits(t *testing.T) {
	ctx := context.Background()
	call := func(id int, text string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)
	}
	for _, c := range []struct {
		name  string
		delay bool // the first call's answer is delayed (a scripted fault)
		first []byte
		want  []string // in the first call's answer, its id first
	}{
		{"delayed", true, call(41, "m3"), []string{`"id":41,`, `"text":"m3"`}},
		{"missed", false, call(42, "nowhere-recorded"), []string{`"id":42,`, `nowhere-recorded`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cassette := scatteredCassette(10)
			if c.delay {
				cassette.Interactions[4].Fault = &cassettes.Fault{DelayMs: 30} // the call of m3
			}
			e, err := New(cassette, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := &syncBuffer{}
			conn := newConn(e, e.newSession(), out)
			for _, l := range []string{scatteredInitialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
				conn.receive(ctx, []byte(l))
			}
			conn.receive(ctx, c.first)
			for i := range 5 { // answered at once, each in the reader's memory
				conn.receive(ctx, call(100+i, fmt.Sprintf("m%d", i)))
			}
			conn.calls.wait()
			conn.wg.Wait()
			conn.settle()
			first := lineWith(t, out.String(), c.want[0])
			for _, w := range c.want[1:] {
				if !strings.Contains(first, w) {
					t.Errorf("the answer to the first call is %s, want one with %s", first, w)
				}
			}
			if n := strings.Count(out.String(), "\n"); n != 7 {
				t.Errorf("%d answers, want 7:\n%s", n, out.String())
			}
		})
	}
}

// batchLine is a client's batch of n calls of scatteredCassette's echo,
// with ids from first, the text of call i m(i mod k).
func batchLine(n, first, k int) []byte {
	line := []byte{'['}
	for i := range n {
		if i > 0 {
			line = append(line, ',')
		}
		line = fmt.Appendf(line, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, first+i, i%k)
	}
	return append(line, ']')
}

// BenchmarkServeBatch is the stdio front end's work for a client's batch
// of N calls answered at once, per call, as the growth group of the bench
// harness sends them (`go run ./bench -only growth -growth-only "batch of
// N"`), without the system calls.
func BenchmarkServeBatch(b *testing.B) {
	e := scatteredEngine(b, 10)
	for _, n := range []int{1000, 100000} {
		line := batchLine(n, 1, 10)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			out := &discardTry{}
			ctx := context.Background()
			conn := scatteredConn(e, out)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				conn.receive(ctx, line)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}]`, n, (n-1)%10); !bytes.HasSuffix(out.last, []byte(want+"\n")) {
				b.Fatalf("the answer ends %q, want %s", out.last[max(0, len(out.last)-100):], want)
			}
		})
	}
}

// TestServeBatchAllocates: a client's batch answered at once costs an
// allocation a call (its id) and about its own size in memory: the
// elements are read where the line is, each in the reader's memory
// (borrow), and the responses are copied into the one line that answers
// the batch, which is written or queued as it is (there were 4
// allocations a call and 6 times the line's size: the line's copy, a
// parse and a response a call, the list of responses, their join and the
// join's copy).
func TestServeBatchAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	const n = 2000
	e := scatteredEngine(t, 10)
	out := &discardTry{}
	ctx := context.Background()
	conn := scatteredConn(e, out)
	line := batchLine(n, 1, 10)
	conn.receive(ctx, line) // the reader's memory, made once
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	allocs := testing.AllocsPerRun(5, func() { conn.receive(ctx, line) })
	runtime.ReadMemStats(&after)
	if allocs > n+16 {
		t.Errorf("a batch of %d calls allocates %v times, want at most %d (an id a call)", n, allocs, n+16)
	}
	// AllocsPerRun runs the function once more than it is asked to.
	if perLine := float64(after.TotalAlloc-before.TotalAlloc) / 6 / float64(len(line)); perLine > 1.5 {
		t.Errorf("a batch allocates %.2f times its line's size, want at most 1.5", perLine)
	}
	if got, want := strings.Count(string(out.last), `"result"`), n; got != want || !bytes.HasSuffix(out.last, []byte("]\n")) {
		t.Fatalf("the answer holds %d results, want %d in one array: %.200s", got, want, out.last)
	}
}

// TestBigBatchElementAllocates: a batch of one request of a megabyte
// with a short answer costs the request's copy, not a second megabyte
// for its answer's room (the room an answer makes at first is at most
// maxHintAnElement an element; it was the whole line: 2.02 times it).
func TestBigBatchElementAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	out := &discardTry{}
	conn := scatteredConn(scatteredEngine(t, 10), out)
	line := []byte(`[{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}}]`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	conn.receive(context.Background(), line)
	runtime.ReadMemStats(&after)
	if got := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(line)); got > 1.2 {
		t.Errorf("a batch of one request of %d bytes allocated %.2f times its size, want at most 1.2", len(line), got)
	}
	if want := `[{"jsonrpc":"2.0","id":7,"result":{}}]` + "\n"; string(out.last) != want {
		t.Errorf("the answer is %q, want %q", out.last, want)
	}
}

// TestBatchBorrowKeepsWhatWaits: in a client's batch, a request whose
// answer waits and a request that missed keep their memory while the
// elements after them are answered at once in the reader's memory; the
// batch's answer holds every response under its own id.
func TestBatchBorrowKeepsWhatWaits(t *testing.T) {
	cassette := scatteredCassette(10)
	cassette.Interactions[4].Fault = &cassettes.Fault{DelayMs: 30} // the call of m3
	e, err := New(cassette, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := &syncBuffer{}
	conn := newConn(e, e.newSession(), out)
	for _, l := range []string{scatteredInitialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		conn.receive(ctx, []byte(l))
	}
	line := []byte(`[{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m3"}}},` +
		`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"nowhere-recorded"}}},`)
	line = append(line, batchLine(5, 100, 10)[1:]...)
	conn.receive(ctx, line)
	clear(line) // the reader's memory, overwritten by the next read
	conn.calls.wait()
	conn.wg.Wait()
	conn.settle()
	answer := lineWith(t, out.String(), `"id":41,`)
	if !strings.HasPrefix(answer, "[") || !strings.HasSuffix(answer, "]\n") {
		t.Errorf("the batch's answer is not one array: %s", answer)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(answer), &got); err != nil {
		t.Fatalf("the batch's answer: %v: %s", err, answer)
	}
	texts := map[float64]string{}
	for _, r := range got {
		texts[r["id"].(float64)] = fmt.Sprint(r["result"], r["error"])
	}
	want := map[float64]string{41: "m3", 42: "nowhere-recorded", 100: "m0", 101: "m1", 102: "m2", 103: "m3", 104: "m4"}
	if len(texts) != len(want) {
		t.Errorf("the batch's answer has the ids of %v, want %d ids", texts, len(want))
	}
	for id, text := range want {
		if !strings.Contains(texts[id], text) {
			t.Errorf("the response of id %v is %s, want one with %s", id, texts[id], text)
		}
	}
}

// lineWith returns the line of out that holds s.
func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			return line
		}
	}
	t.Fatalf("no line with %s in %s", s, out)
	return ""
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

// BenchmarkHTTPSession is a call of a stateful Streamable HTTP session
// (2025-11-25) as the go-sdk client makes it, answered with one event of a
// text/event-stream as the go-sdk server recorded it: the handler's work
// for the bench harness's "http: replay / go-sdk server" row, without a
// network. A session lasts 3,000 calls, then ends with DELETE.
func BenchmarkHTTPSession(b *testing.B) {
	const calls = 3000
	c := cassettes.New()
	c.Interactions = append(c.Interactions, cassettes.Interaction{
		From:    cassettes.FromClient,
		Request: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench-client","version":"1"},"protocolVersion":"2025-11-25"}}`),
		Response: &cassettes.Message{From: cassettes.FromServer,
			Message: []byte(`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-11-25","serverInfo":{"name":"bench-server","version":"1"}}}`)},
		HTTP: &cassettes.HTTP{Status: 200, Form: "sse", ResponseHeaders: map[string]string{mcp.HeaderSessionID: "[REDACTED]"}},
	}, cassettes.Interaction{
		From:    cassettes.FromClient,
		Request: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`),
		HTTP:    &cassettes.HTTP{Status: 202, Form: "none"},
	})
	request := func(id, i int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, id, i%benchDistinct)
	}
	lines := make([][]byte, calls)
	for i := range calls {
		lines[i] = request(i+2, i)
		c.Interactions = append(c.Interactions, cassettes.Interaction{
			From:    cassettes.FromClient,
			Request: lines[i],
			Response: &cassettes.Message{From: cassettes.FromServer,
				Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}`, i+2, i%benchDistinct)},
			HTTP: &cassettes.HTTP{Status: 200, Form: "sse"},
		})
	}
	e, err := New(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	h := e.Handler(nil)
	defer h.Close()
	post := func(sid string, body []byte) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set(mcp.HeaderSessionID, sid)
			r.Header.Set(mcp.HeaderProtocolVersion, "2025-11-25")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	var sid string
	open := func() {
		if sid != "" {
			r := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
			r.Header.Set(mcp.HeaderSessionID, sid)
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		w := post("", c.Interactions[0].Request)
		if sid = w.Header().Get(mcp.HeaderSessionID); w.Code != http.StatusOK || sid == "" {
			b.Fatalf("initialize: %d %q", w.Code, w.Body)
		}
		if w := post(sid, c.Interactions[1].Request); w.Code != http.StatusAccepted {
			b.Fatalf("notifications/initialized: %d %q", w.Code, w.Body)
		}
	}
	var w *httptest.ResponseRecorder
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%calls == 0 {
			open()
		}
		w = post(sid, lines[i%calls])
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/event-stream" {
			b.Fatalf("call %d: %d %s %q", i, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
	b.StopTimer()
	if want := fmt.Sprintf(`"text":"m%d"`, (b.N-1)%calls%benchDistinct); !bytes.Contains(w.Body.Bytes(), []byte(want)) {
		b.Fatalf("the last answer is %q, want one with %s", w.Body, want)
	}
}

// TestMissesKeepNotTheirLines: mcpmock replay keeps each miss for its
// report (OnMiss), and what it keeps is the miss's explanation, not the
// line it came in:
// 48 misses of 1 MiB each leave far less than 48 MiB in use while the
// session goes on. (The request's id read as a view of the reader's copy
// of the line kept every such line whole: the growth harness's misses cost
// twice the CPU, in page faults and collections.)
func TestMissesKeepNotTheirLines(t *testing.T) {
	if raceEnabled {
		t.Skip("memory is counted without -race")
	}
	e, lines := benchSession(t)
	var kept []Miss // as mcpmock replay keeps them for its report
	e.opts.OnMiss = func(m Miss) { kept = append(kept, m) }
	const misses = 48
	big := bytes.Replace(lines[0], []byte(`"text":"m0"`), []byte(`"text":"`+strings.Repeat("x", 1<<20)+`"`), 1)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- e.Serve(t.Context(), inR, outW); outW.Close() }()
	answers := bufio.NewReaderSize(outR, 1<<16)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range misses {
		go inW.Write(append(bytes.Replace(big, []byte(`"id":2,`), fmt.Appendf(nil, `"id":%d,`, 100000+i), 1), '\n'))
		answer, err := answers.ReadBytes('\n')
		if err != nil || !bytes.Contains(answer, []byte(`"error"`)) {
			t.Fatalf("miss %d answered %.200s, %v; want an error", i, answer, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if held > misses<<20/4 {
		t.Errorf("%d misses of 1 MiB keep %d MiB, want well under %d", misses, held>>20, misses)
	}
	t.Logf("%d misses of 1 MiB keep %.1f MiB", misses, float64(held)/(1<<20))
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(kept) != misses {
		t.Errorf("%d misses reported, want %d", len(kept), misses)
	}
}
