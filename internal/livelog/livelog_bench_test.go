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
