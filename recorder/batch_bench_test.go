package recorder

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// batchSizes are the sizes at which the costs that must be linear are
// measured: the per-request figure (ns/req) stays flat when they are.
var batchSizes = []int{1_000, 10_000, 100_000}

// pingBatch is a JSON-RPC batch of n pings (ids from 1), and the batch of
// their answers in reverse order (the order a server picks is its own; the
// last request answered first is the worst case for an ordered list).
func pingBatch(n int) (req, resp []byte) {
	req, resp = []byte{'['}, []byte{'['}
	for i := 1; i <= n; i++ {
		if i > 1 {
			req, resp = append(req, ','), append(resp, ',')
		}
		req = fmt.Appendf(req, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		resp = fmt.Appendf(resp, `{"jsonrpc":"2.0","id":%d,"result":{}}`, n+1-i)
	}
	return append(req, ']'), append(resp, ']')
}

// BenchmarkBatch is what recording one batch of N requests and the batch
// of their answers costs the builder, per request, as on stdio: it once
// deleted each answered request from an ordered slice of the pending ones,
// a cost quadratic in N (45 s for N = 100,000, under the lock that saves
// need).
func BenchmarkBatch(b *testing.B) {
	for _, n := range batchSizes {
		req, resp := pingBatch(n)
		b.Run("stdio/N="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				bl := newBuilder(cassettes.New(), livelog.Discard)
				bl.add(cassettes.FromClient, req, 1)
				if !bl.add(cassettes.FromServer, resp, 2) || bl.pending.len() != 0 {
					b.Fatal("the answers did not complete the batch")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
	}
}

// BenchmarkHTTPPending is what N requests pending over HTTP cost the
// builder, per request: N POSTs of one request each, then each refused
// with a body that is not JSON-RPC (refused), or one POST of a batch of N
// answered event by event on its stream (stream). A refusal once looked
// through all the pending requests, and each event through the batch's
// interactions from the first: both quadratic in N (20,000: 7 s).
func BenchmarkHTTPPending(b *testing.B) {
	for _, n := range batchSizes {
		reqs := make([][]byte, n)
		resps := make([][]byte, n)
		for i := range n {
			reqs[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
			resps[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, i+1)
		}
		b.Run("refused/N="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				bl := newBuilder(cassettes.New(), livelog.Discard)
				for i := range n {
					bl.addHTTP(cassettes.FromClient, reqs[i], 1, &HTTPNote{Exchange: uint64(i + 1), RequestHeaders: map[string]string{}})
				}
				// The last POST is refused first: the worst case for a
				// search from the first.
				for i := n - 1; i >= 0; i-- {
					bl.addHTTP(cassettes.FromServer, nil, 2, &HTTPNote{Exchange: uint64(i + 1), Status: 401, Form: "none", Body: "no", ResponseHeaders: map[string]string{}})
				}
				if bl.pending.len() != 0 {
					b.Fatalf("%d requests still pending", bl.pending.len())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
		req, _ := pingBatch(n)
		b.Run("stream/N="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				bl := newBuilder(cassettes.New(), livelog.Discard)
				bl.addHTTP(cassettes.FromClient, req, 1, &HTTPNote{Exchange: 1, RequestHeaders: map[string]string{}})
				for i := range n {
					bl.addHTTP(cassettes.FromServer, resps[i], 2, &HTTPNote{Exchange: 1, EventID: "e", HasEventID: true})
				}
				if bl.pending.len() != 0 {
					b.Fatalf("%d requests still pending", bl.pending.len())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
	}
}

// BenchmarkSaveBatch is the save that follows the answers of a batch of N
// requests: it spills and writes all N interactions at once, per request.
// It once encoded them into one buffer grown as it filled, copying all of
// it at each growth: 8.8 µs a request for N = 100,000 (0.9 s), where
// DESIGN.md promises that a tap killed a second after the answers keeps
// them; in chunks, 3.2–3.7 µs. The figure rises from N = 1,000 (1.4 µs) to
// 10,000 (2.7 µs) as the interactions no longer fit the processor's
// caches, not with the work a request.
func BenchmarkSaveBatch(b *testing.B) {
	for _, n := range batchSizes {
		req, resp := pingBatch(n)
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				// (Not saved on the way: the save is what is timed.)
				rec := batchRecorder(b, req, &Options{noSaveFirst: true})
				rec.Observe(cassettes.FromServer, resp, time.Now())
				rec.Sync()
				start := time.Now()
				if err := rec.save(false); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
				rec.Close()
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
	}
}

// BenchmarkBatchAnswered is the way of the answers to a batch of N
// requests to the file: from the moment the tap observes the batch of
// answers to the end of the save that holds them, per request. DESIGN.md
// promises that a tap killed a second after the answers keeps them
// (TestRecordBigBatch), whatever the load: this is the work that the
// promise waits for, and for a batch of at least saveFirstSize bytes
// (N = 100,000) what the client waits for (saveFirst).
func BenchmarkBatchAnswered(b *testing.B) {
	for _, n := range batchSizes {
		req, resp := pingBatch(n)
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				rec := batchRecorder(b, slices.Clone(req), &Options{})
				if err := rec.save(false); err != nil {
					b.Fatal(err)
				}
				answers := observed{from: cassettes.FromServer, data: slices.Clone(resp), at: time.Now()}
				start := time.Now()
				rec.Observe(answers.from, answers.data, answers.at) // returns once saved if saveFirst
				if !rec.saveFirst(&answers) {
					rec.Sync()
					if err := rec.save(false); err != nil {
						b.Fatal(err)
					}
				}
				spent += time.Since(start)
				rec.Close()
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
	}
}

// batchRecorder is a recorder to a file that saves every hour otherwise,
// after a handshake and the batch of requests req.
func batchRecorder(b *testing.B, req []byte, opts *Options) *Recorder {
	opts.FlushInterval = time.Hour
	rec, err := New(filepath.Join(b.TempDir(), "c.json"), opts)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	rec.Observe(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`), at)
	rec.Observe(cassettes.FromServer, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`), at)
	rec.Observe(cassettes.FromClient, req, at)
	rec.Sync()
	return rec
}

// BenchmarkSavePending is a save while N requests are pending, nothing
// having changed since the last one, per pending request: an unanswered
// request keeps itself and all that follow in memory, and each save (every
// 0.7 s while busy) goes through them to write them. The cost-growth group
// of the bench (go run ./bench -only growth) shows it: 100,000 pending
// requests cost the tap about 6 µs a request more than 1,000.
func BenchmarkSavePending(b *testing.B) {
	for _, n := range batchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			rec := batchRecorder(b, []byte(`{"jsonrpc":"2.0","id":"first","method":"ping"}`), &Options{})
			defer rec.Close()
			at := time.Now()
			for i := range n {
				rec.Observe(cassettes.FromClient, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i), at)
			}
			rec.Sync()
			if err := rec.save(false); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := rec.save(false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/req")
		})
	}
}
