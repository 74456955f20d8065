package replayer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// missCassette records n calls of the tool "search", each with small
// arguments of its own.
func missCassette(n int) *cassettes.Cassette {
	c := cassettes.New()
	c.Interactions = make([]cassettes.Interaction, n)
	for i := range n {
		c.Interactions[i] = cassettes.Interaction{
			From:    cassettes.FromClient,
			Request: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"query %d","limit":%d,"filters":{"lang":"en","since":%d}}}}`, i+1, i, 10+i%5, 2000+i%20),
			Response: &cassettes.Message{From: cassettes.FromServer,
				Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"result %d"}]}}`, i+1, i)},
		}
	}
	return c
}

// missRequest is a call of "search" of about size bytes that no recorded
// call matches: its arguments carry documents, as an array of objects
// ("docs") or as one long string ("text").
func missRequest(size int, shape string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"query 3","limit":13,"filters":{"lang":"en","since":2003},"documents":`)
	switch shape {
	case "text":
		b.WriteByte('"')
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "word%d ", i)
		}
		b.WriteByte('"')
	default:
		b.WriteByte('[')
		for i := 0; b.Len() < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d,"title":"document %d","body":"the quick brown fox jumps over the lazy dog %d"}`, i, i, i)
		}
		b.WriteByte(']')
	}
	b.WriteString(`}}}`)
	return []byte(b.String())
}

// BenchmarkMiss is the cost of a request of size S that matches nothing,
// against R recorded calls of its tool: the matching and the explanation
// (closest candidates, differences, diff, hint). The bar (DESIGN.md): at
// most 50 ms at S = 1 MB, R = 1,000, and linear: ns/byte stays flat as S
// grows, ns/op grows no faster than S + R.
func BenchmarkMiss(b *testing.B) {
	for _, shape := range []string{"docs", "text"} {
		for _, size := range []int{10 << 10, 100 << 10, 1 << 20} {
			msg, err := jsonrpc.Parse(missRequest(size, shape))
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range []int{10, 100, 1000} {
				e, err := New(missCassette(r), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("%s/S=%dKB/R=%d", shape, size>>10, r), func(b *testing.B) {
					s := e.newSession()
					b.ReportAllocs()
					for b.Loop() {
						p := s.plan(msg)
						if p.Miss == nil || len(p.Miss.Candidates) == 0 {
							b.Fatal("no explained miss")
						}
					}
					ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(ns/float64(size), "ns/byte")
					b.ReportMetric(ns/float64(r), "ns/recorded")
				})
			}
		}
	}
}
