package recorder

import (
	"fmt"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// BenchmarkContract is the cost of the contract checks on the recording
// side: the build goroutine's work for one tools/call round trip of a
// 2026-07-28 client (request and result, the messages of
// BenchmarkRecordCall), with the checks ("on") and without ("off"), and
// with them for a tool that declares no outputSchema
// ("on-no-outputSchema": no result to validate). ns/op, cpu-ns/op and
// allocs/op are per round trip of two messages; the figures are in
// docs/contract.md and in the commit that measured them.
func BenchmarkContract(b *testing.B) {
	req := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m%d"}}}`
	resp := `{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1"}},"content":[{"type":"text","text":"m%d"}],"structuredContent":{"text":"m%d"},"resultType":"complete"}}`
	list := `{"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}`
	plain := `{"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`
	for _, bc := range []struct {
		name string
		on   bool
		list string
	}{{"off", false, list}, {"on", true, list}, {"on-no-outputSchema", true, plain}} {
		on, list := bc.on, bc.list
		b.Run(bc.name, func(b *testing.B) {
			bl := newBuilder(cassettes.New(), livelog.Discard)
			var ct *contract
			if on {
				ct = newContract(livelog.Discard)
				bl.checking = true
			}
			add := func(from cassettes.Direction, data []byte) {
				if ct != nil {
					ct.unit(observed{from: from, data: data})
				}
				bl.addHTTP(from, data, 0, nil)
				if ct != nil {
					ct.run(bl.checks)
					bl.checks = bl.checks[:0]
				}
			}
			add(cassettes.FromClient, []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`))
			add(cassettes.FromServer, []byte(list))
			reqs := make([][]byte, 64)
			resps := make([][]byte, 64)
			for i := range reqs {
				reqs[i] = fmt.Appendf(nil, req, i+1, i)
				resps[i] = fmt.Appendf(nil, resp, i+1, i, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				add(cassettes.FromClient, reqs[i%64])
				add(cassettes.FromServer, resps[i%64])
				if i%1024 == 1023 {
					bl.evict(256)
				}
			}
			// The process's CPU time a round trip: under load, less noisy
			// than ns/op.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			if on {
				if _, n := ct.list(); n != 0 {
					b.Fatalf("%d warnings on clean traffic", n)
				}
			}
		})
	}
}
