package mcpmocktest_test

import (
	"context"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/mcpmocktest"
)

// TestNoLeaks runs servers through every way in, closes them, and checks
// that the goroutines started are gone (waiting for them to wind down, not
// sleeping a fixed time).
func TestNoLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("servers", func(t *testing.T) {
		for _, lib := range libraries {
			for _, way := range waysIn {
				ft := &fakeT{TB: t}
				srv := mcpmocktest.NewServer(ft, weatherCassette, nil)
				runClient(t, srv, lib, "", way, weatherCalls("London"))
				// A session the client never closes is ended by Close.
				srv.Conn()
				srv.Close()
				if errs := ft.failures(); len(errs) > 0 {
					t.Errorf("%s/%s: %q", lib, way, errs)
				}
			}
		}
	})
	http.DefaultClient.CloseIdleConnections()
	if n := settle(before); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf)
	}
}

// settle waits until no more than want goroutines run, yielding to them,
// for at most five seconds, and returns the last count.
func settle(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond) // let exiting goroutines finish
	}
}

// BenchmarkStartConnectCallClose measures what a test pays: start a server,
// connect a go-sdk client, make one call, close both. DESIGN.md's bar is a
// median of 2 ms or less; the benchmark reports the median as median-ms.
//
//	go test ./mcpmocktest -run '^$' -bench StartConnectCallClose -benchtime 500x
func BenchmarkStartConnectCallClose(b *testing.B) {
	c, err := cassettes.Load(weatherCassette)
	if err != nil {
		b.Fatal(err)
	}
	for _, way := range []string{"conn", "url"} {
		for _, version := range eras {
			b.Run(way+"/"+orDefault(version), func(b *testing.B) {
				ctx := context.Background()
				client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				times := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					srv := mcpmocktest.NewServerFromCassette(b, c, nil)
					var tr mcp.Transport
					if way == "conn" {
						r, w := srv.Conn()
						tr = &mcp.IOTransport{Reader: r, Writer: w}
					} else {
						tr = &mcp.StreamableClientTransport{Endpoint: srv.URL()}
					}
					cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
					if err != nil {
						b.Fatal(err)
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"location": "London"}})
					if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "London") {
						b.Fatalf("call: %v %v", res, err)
					}
					cs.Close()
					srv.Close()
					times = append(times, time.Since(start))
				}
				sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
				b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
			})
		}
	}
}
