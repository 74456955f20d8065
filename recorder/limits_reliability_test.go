package recorder

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
)

// logBuffer collects a logger's lines; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// bigAnswer writes a JSON-RPC answer to id 1 of n bytes of padding to w,
// in pieces, allocating nothing per piece.
func bigAnswer(w io.Writer, n int) {
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"`)
	piece := bytes.Repeat([]byte{'x'}, 32<<10)
	for ; n > 0; n -= len(piece) {
		w.Write(piece[:min(n, len(piece))])
	}
	io.WriteString(w, `"}}`)
}

// limitedTap runs the HTTP tap with a message limit of max in front of
// up, and returns its URL, recorder and log.
func limitedTap(t *testing.T, up string, max int) (string, *Recorder, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	url, rec := startTapWith(t, up, &HTTPOptions{MaxMessage: max, Logger: slog.New(slog.NewTextHandler(log, nil))})
	return url, rec, log
}

// ping posts a ping to the tap at url and returns the response, whose body
// the caller reads.
func ping(t *testing.T, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// recordedText is every message and raw text of the cassette.
func recordedText(c *cassettes.Cassette) string {
	var b strings.Builder
	for _, in := range c.Interactions {
		b.Write(in.Request)
		b.Write(in.Notification)
		if in.Raw != nil {
			b.WriteString(*in.Raw)
		}
		for _, m := range in.Exchange {
			b.Write(m.Message)
			if m.Raw != nil {
				b.WriteString(*m.Raw)
			}
		}
		if in.Response != nil {
			b.Write(in.Response.Message)
		}
	}
	return b.String()
}

// TestHTTPTapAnswerOverTheLimit: a JSON answer of 32 MiB from the upstream,
// with a message limit of 64 KiB, reaches the client whole and unchanged,
// passed on as it comes: the tap allocates a fraction of it (it once read
// it whole, twice over: a 512 MiB answer took it to 1.2 GB). The log warns
// naming the limit, and the cassette holds a note of the answer's size
// instead of it.
func TestHTTPTapAnswerOverTheLimit(t *testing.T) {
	const size, limit = 32 << 20, 64 << 10
	for _, tt := range []struct {
		name    string
		chunked bool
	}{
		{"Content-Length", false},
		{"chunked", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want bytes.Buffer
			bigAnswer(&want, size)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				if !tt.chunked {
					w.Header().Set("Content-Length", fmt.Sprint(want.Len()))
				}
				bigAnswer(w, size)
			}))
			t.Cleanup(up.Close)
			tapURL, rec, log := limitedTap(t, up.URL+"/mcp", limit)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp := ping(t, tapURL)
			h := sha256.New()
			n, err := io.Copy(h, resp.Body)
			runtime.ReadMemStats(&after)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
			}
			if sum := sha256.Sum256(want.Bytes()); n != int64(want.Len()) || !bytes.Equal(h.Sum(nil), sum[:]) {
				t.Errorf("the client got %d bytes, not the upstream's %d unchanged", n, want.Len())
			}
			// The upstream writes from one piece and the client hashes: what
			// was allocated is the tap's (and net/http's buffers).
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("passing on the answer allocated %d MiB, want a fraction of its %d MiB", alloc>>20, size>>20)
			}
			if got := log.String(); !strings.Contains(got, "over the message limit of 65536 bytes") {
				t.Errorf("log %q: want a warning naming the limit", got)
			}
			rec.Sync()
			text := recordedText(rec.Cassette())
			if !strings.Contains(text, "over the recording limit of 65536 bytes") || strings.Contains(text, "xxxxxxxx") {
				t.Errorf("cassette holds %.300q: want a note of the answer, not the answer", text)
			}
		})
	}
}

// TestHTTPTapSSEEventOverTheLimit: an event stream whose second event is
// 1 MiB, with a message limit of 64 KiB, reaches the client up to the
// first event and at most a read past the limit: the stream is cut as soon
// as the event is past it (it was once passed on whole, and cut only at
// its end). The log says so, and the cassette holds the first event.
func TestHTTPTapSSEEventOverTheLimit(t *testing.T) {
	const limit = 64 << 10
	first := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e1\ndata: %s\n\n", first)
		http.NewResponseController(w).Flush()
		io.WriteString(w, "id: e2\ndata: ")
		bigAnswer(w, 1<<20)
		io.WriteString(w, "\n\n")
	}))
	t.Cleanup(up.Close)
	tapURL, rec, log := limitedTap(t, up.URL+"/mcp", limit)
	body, err := io.ReadAll(ping(t, tapURL).Body)
	if err != nil {
		t.Logf("reading the cut stream: %v", err)
	}
	if !bytes.Contains(body, []byte(first)) {
		t.Errorf("the client did not get the first event: %.200q", body)
	}
	if len(body) > limit+64<<10 {
		t.Errorf("the client got %d bytes of the stream: the event past the limit was passed on", len(body))
	}
	if got := log.String(); !strings.Contains(got, "over the message limit of 65536 bytes") {
		t.Errorf("log %q: want an error naming the limit", got)
	}
	rec.Sync()
	if text := recordedText(rec.Cassette()); !strings.Contains(text, "notifications/progress") || strings.Contains(text, "xxxxxxxx") {
		t.Errorf("cassette holds %.300q: want the first event only", text)
	}
}

// TestBridgeAnswerOverTheLimit: through the stdio-to-HTTP bridge, an
// answer past the message limit would be a line that the client cannot
// take either: the request gets a JSON-RPC error naming the limit instead,
// and the bridge goes on.
func TestBridgeAnswerOverTheLimit(t *testing.T) {
	const limit = 64 << 10
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(body, []byte(`"id":1`)) {
			bigAnswer(w, 1<<20)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	call, end := startBridge(t, up.URL+"/mcp", &BridgeOptions{MaxMessage: limit})
	if msg := call("1"); msg.ID != "1" || msg.Error == nil || !strings.Contains(msg.Error.Message, "over the message limit of 65536 bytes") {
		t.Fatalf("an answer over the limit: %.300s, want an error for id 1 naming the limit", msg.Raw)
	}
	if msg := call("2"); msg.ID != "2" || msg.Result == nil {
		t.Fatalf("after it: %s, want the answer to id 2", msg.Raw)
	}
	end()
}
