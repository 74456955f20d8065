package recorder

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/rusage"
)

// BenchmarkRecordCall is the whole cost of recording one tools/call round
// trip of a go-sdk client and server (the messages of the stdio benchmark):
// queueing both lines, building the interaction, finishing and encoding
// it, spilling it and its share of the saves. The lines come at about the
// rate of the stdio benchmark, so that saves come as often as in a busy
// session; Close waits for the last of it. The figure is cpu-ns/op, the
// process's CPU time a call, against the baseline of the same loop that
// records nothing ("x-of-baseline" is recorded / baseline); ns/op is
// mostly the pacing.
func BenchmarkRecordCall(b *testing.B) {
	var base float64
	for _, record := range []bool{false, true} {
		name := "baseline"
		if record {
			name = "record"
		}
		b.Run(name, func(b *testing.B) {
			var rec *Recorder
			if record {
				var err error
				if rec, err = New(filepath.Join(b.TempDir(), "c.json"), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i%64)
				resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1"}},"content":[{"type":"text","text":"m%d"}],"resultType":"complete"}}`, i+1, i%64)
				if rec != nil {
					now := time.Now()
					rec.Observe(cassettes.FromClient, req, now)
					rec.Observe(cassettes.FromServer, resp, now)
				}
				if i%2 == 1 {
					time.Sleep(time.Millisecond)
				}
			}
			if rec != nil {
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu := float64(cpuTime()-cpu0) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			if !record {
				base = cpu
			} else if base > 0 {
				b.ReportMetric(cpu/base, "x-of-baseline")
			}
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	u, _ := rusage.Self()
	return u.CPU()
}

// BenchmarkRecordWork is the recording work of one tools/call round trip
// of BenchmarkRecordCall without its goroutines and pacing: the builder's
// (parse, group, contract checks, the early encoding) and its share of the
// saves, on the benchmark's goroutine, so that ns/op is CPU time and small
// changes show. The calls go in sessions of 2,000, as in the stdio bench
// (go run ./bench), at 1,600 calls a second: each saved as often as the
// saver does when its saves are quick (busySaveInterval) and closed at its
// end. The figure is cpu-ns/op,
// the process's CPU time a call (ns/op also counts the wait for the disk
// of each session's last save).
func BenchmarkRecordWork(b *testing.B) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	dir := b.TempDir()
	var rec *Recorder
	defer func() {
		if rec != nil {
			rec.Close()
		}
	}()
	now := time.Now()
	saveEvery := int(busySaveInterval.Seconds() * 1600)
	i := 0
	for b.Loop() {
		if i%2000 == 0 {
			if rec != nil {
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var err error
			if rec, err = New(filepath.Join(dir, "c.json"), &Options{FlushInterval: time.Hour}); err != nil {
				b.Fatal(err)
			}
		}
		i++
		req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m%d"}}}`, i, i%64)
		resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1"}},"content":[{"type":"text","text":"m%d"}],"resultType":"complete"}}`, i, i%64)
		rec.mu.Lock()
		for k, o := range []observed{{from: cassettes.FromClient, data: req, at: now}, {from: cassettes.FromServer, data: resp, at: now}} {
			rec.state.checks = append(rec.state.checks, contractEvent{unit: &o})
			if rec.state.addHTTP(o.from, o.data, rec.offset(o.at), nil) != (k == 1) {
				rec.mu.Unlock()
				b.Fatalf("call %d: the answer did not complete the interaction", i)
			}
		}
		if i%40 == 0 { // the builder takes about 40 calls at a time
			rec.handOff()
		}
		rec.dirty = true
		rec.mu.Unlock()
		if i%saveEvery == 0 {
			if err := rec.save(false); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
