package livelog

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// BenchmarkDescribe is the live log line of an ordinary tools/call and of
// its answer: the cost the log adds to each message a tap forwards.
func BenchmarkDescribe(b *testing.B) {
	for _, c := range []struct{ name, raw string }{
		{"request", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric"},"_meta":{"progressToken":12}}}`},
		{"response", `{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"Sunny, 22°C in New York; wind 12 km/h from the west."}],"structuredContent":{"temperature":22,"conditions":"sunny"},"isError":false}}`},
		// The 2026-07-28 era's: each request and result carries _meta.
		{"request-2026", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m4"}}}`},
		{"response-2026", `{"jsonrpc":"2.0","id":6,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1"}},"content":[{"type":"text","text":"m4"}],"resultType":"complete"}}`},
	} {
		msg, err := jsonrpc.Parse([]byte(c.raw))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Describe(ToServer, msg, time.Millisecond, "")
			}
		})
		// What replay's log costs: the line, to a text handler with the
		// default rules.
		b.Run(c.name+"-text-log", func(b *testing.B) {
			l := slog.New(NewTextHandler(io.Discard))
			b.ReportAllocs()
			for b.Loop() {
				Message(l, ToServer, msg, time.Millisecond, "")
			}
		})
		// What record's log costs: the line, then the handler's pass over
		// the line and its attributes (Redacting), to a text handler.
		b.Run(c.name+"-record-log", func(b *testing.B) {
			rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Values: []string{"forbidden-value"}}))
			if err != nil {
				b.Fatal(err)
			}
			l := Redacting(slog.New(NewTextHandler(io.Discard)), rd)
			b.ReportAllocs()
			for b.Loop() {
				Message(l, ToServer, msg, time.Millisecond, "")
			}
		})
	}
}
