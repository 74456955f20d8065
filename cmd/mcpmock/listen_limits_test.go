package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/replayer"
)

// replayBehindGuard is replay's HTTP handler behind its guard, in process.
func replayBehindGuard(t *testing.T, guard *httpguard.Options) (http.Handler, *replayer.HTTPHandler) {
	t.Helper()
	cas, err := cassettes.Load(writeCassette(t))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := replayer.New(cas, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := replayHandler(eng, guard)
	t.Cleanup(h.Close)
	return httpguard.Wrap(h, guard), h
}

// initializeBody is an initialize of 2025-11-25 whose params carry pad
// bytes of padding.
func initializeBody(pad int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"_pad":"%s"}}`, strings.Repeat("a", pad))
}

func postTo(h http.Handler, body []byte, sid string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// TestReplayHTTPReadsBodyOnce measures the bytes allocated for a request of
// 8 MiB through replay's guard and handler: the body is read once, into
// one buffer, and handed to the replayer without a copy (1.00× the body;
// before, the guard's growing io.ReadAll and the handler's own: 4.07×).
func TestReplayHTTPReadsBodyOnce(t *testing.T) {
	const size = 8 << 20
	h, _ := replayBehindGuard(t, &httpguard.Options{})
	body := initializeBody(size)
	if rec := postTo(h, body, ""); rec.Code != http.StatusOK {
		t.Fatalf("initialize: %d %.300s", rec.Code, rec.Body)
	}
	const runs = 4
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		postTo(h, body, "")
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated a request for a body of %d (%.2f×)", per, len(body), per/float64(len(body)))
	if per > 1.5*float64(len(body)) {
		t.Errorf("%.0f bytes allocated a request for a body of %d bytes (%.2f×), want about one copy", per, len(body), per/float64(len(body)))
	}
}

// TestReplayExpiredSessionIsDropped: an expired session of replay answers
// 404 and its replay state is gone from the handler (replayHandler wires
// EndSession).
func TestReplayExpiredSessionIsDropped(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, rh := replayBehindGuard(t, &httpguard.Options{SessionIdle: time.Minute, Now: clock})
	sid := postTo(h, initializeBody(0), "").Header().Get("Mcp-Session-Id")
	if sid == "" || rh.Sessions() != 1 {
		t.Fatalf("no session: %q, %d", sid, rh.Sessions())
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	ping := []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if rec := postTo(h, ping, sid); rec.Code != http.StatusNotFound {
		t.Fatalf("a ping of the expired session: %d, want 404", rec.Code)
	}
	if n := rh.Sessions(); n != 0 {
		t.Errorf("the replayer still holds %d sessions after expiry, want 0", n)
	}
}

// TestListenMaxSessionsThroughBinary: replay --listen and the HTTP tap
// bound sessions, an escaped initialize included.
func TestListenMaxSessionsThroughBinary(t *testing.T) {
	cassette := writeCassette(t)
	_, replayURL := startListening(t, "replay", "-c", cassette, "--listen", "127.0.0.1:0", "--max-sessions", "1")
	_, upstream := startListening(t, "replay", "-c", cassette, "--listen", "127.0.0.1:0", "--max-sessions", "-1")
	_, tapURL := startListening(t, "record", "-c", tempCassette(t), "--upstream", upstream, "--listen", "127.0.0.1:0", "--max-sessions", "1")
	for name, url := range map[string]string{"replay": replayURL, "record": tapURL} {
		t.Run(name, func(t *testing.T) {
			if resp := postURL(t, url, initializeBody(0), nil); resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
				t.Fatalf("first initialize: %d", resp.StatusCode)
			}
			escaped := bytes.Replace(initializeBody(0), []byte(`"initialize"`), []byte(`"initi\u0061lize"`), 1)
			resp := postURL(t, url, escaped, nil)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("an escaped initialize over --max-sessions 1: %d (session %q), want 503", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
			}
		})
	}
}

func postURL(t *testing.T, url string, body []byte, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestListenBodyBudgetThroughBinary: with --max-inflight-bytes, a body
// still arriving holds its bytes; another large one meanwhile gets 503 with
// Retry-After and a JSON-RPC error naming the flag, a small one is served;
// on replay and on the HTTP tap.
func TestListenBodyBudgetThroughBinary(t *testing.T) {
	cassette := writeCassette(t)
	_, replayURL := startListening(t, "replay", "-c", cassette, "--listen", "127.0.0.1:0", "--max-inflight-bytes", "1000000", "--max-sessions", "-1")
	_, upstream := startListening(t, "replay", "-c", cassette, "--listen", "127.0.0.1:0", "--max-sessions", "-1")
	_, tapURL := startListening(t, "record", "-c", tempCassette(t), "--upstream", upstream, "--listen", "127.0.0.1:0", "--max-inflight-bytes", "1000000", "--max-sessions", "-1")
	for name, url := range map[string]string{"replay": replayURL, "record": tapURL} {
		t.Run(name, func(t *testing.T) {
			// A body of 600,000 bytes whose first half is sent, then the
			// rest once the others are answered.
			held := initializeBody(600_000)
			hold := func() (net.Conn, chan *http.Response) {
				c, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", len(held))
				c.Write(held[:len(held)/2])
				answered := make(chan *http.Response, 1)
				go func() {
					got, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err == nil {
						got.Body.Close()
					}
					answered <- got // nil when the connection was closed
				}()
				return c, answered
			}
			c, answered := hold()
			// The held body takes its bytes once its headers are read: wait
			// for that by retrying until a large body is refused. When an
			// attempt was in flight as the held headers were read, the held
			// body is the one refused; then hold again. Each attempt that
			// is served is followed by a pause that grows (to 50 ms), with
			// nothing in flight: back to back, under load, the held headers
			// were read during an attempt again and again, and 1,000
			// attempts went by without the held body ever taking its bytes
			// (3 runs in 30 beside a busy go test).
			var resp *http.Response
			pause := time.Duration(0)
			for range 1000 {
				if resp = postURL(t, url, initializeBody(500_000), nil); resp.StatusCode == http.StatusServiceUnavailable {
					break
				}
				time.Sleep(pause)
				pause = min(2*pause+time.Millisecond, 50*time.Millisecond)
				select {
				case got := <-answered:
					if got == nil || got.StatusCode != http.StatusServiceUnavailable {
						t.Fatalf("the held body was answered before it was sent whole: %v", got)
					}
					c.Close()
					c, answered = hold()
				default:
				}
			}
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("a 500 KB body while 600 KB are held of a budget of 1 MB: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			if resp := postURL(t, url, initializeBody(1000), nil); resp.StatusCode != 200 {
				t.Errorf("a small body meanwhile: %d, want 200", resp.StatusCode)
			}
			c.Write(held[len(held)/2:])
			if got := <-answered; got == nil || got.StatusCode != 200 {
				t.Errorf("the held body: %v, want 200", got)
			}
			if resp := postURL(t, url, initializeBody(500_000), nil); resp.StatusCode != 200 {
				t.Errorf("the large body once the held one is done: %d, want 200", resp.StatusCode)
			}
		})
	}
}
