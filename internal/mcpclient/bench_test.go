package mcpclient_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpmock/mcpmock/internal/mcpclient"
)

// BenchmarkEventStream: the cost of a message of a POST's event stream
// stays flat as the stream grows (the event ids kept to tell echoes are
// bounded).
func BenchmarkEventStream(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var stream bytes.Buffer
			for i := range n {
				fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i, i)
			}
			fmt.Fprintf(&stream, "id: end\ndata: %s\n\n", reply)
			body := stream.Bytes()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(body)
			}))
			b.Cleanup(srv.Close)
			c, err := mcpclient.New(srv.URL+"/mcp", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			got := 0
			h := &mcpclient.Handler{Message: func(mcpclient.Message) bool { got++; return false }}
			b.ResetTimer()
			for b.Loop() {
				if err := c.Post(b.Context(), echoCall, h); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n+1), "ns/item")
			if got != b.N*(n+1) {
				b.Fatalf("%d messages, want %d", got, b.N*(n+1))
			}
		})
	}
}
