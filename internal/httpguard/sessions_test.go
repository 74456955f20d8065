package httpguard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// initRequest is an initialize POST to h (in process) with the body given.
func initRequest(body string, header map[string]string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	return r
}

// TestMaxSessionsNeverOvershoots sends many initializes at once to a
// handler that holds each until all have been either admitted or refused:
// exactly MaxSessions reach it. (The bound used to be checked before a
// session was counted: every one of them reached it.) Run it with
// -count=20 -race.
func TestMaxSessionsNeverOvershoots(t *testing.T) {
	const limit, clients = 20, 120
	entered := make(chan struct{}, clients)
	release := make(chan struct{})
	var n atomic.Int64
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", n.Add(1)))
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}), &Options{MaxSessions: limit})
	refused := make(chan struct{}, clients)
	var wg sync.WaitGroup
	codes := make([]int, clients)
	for i := range clients {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, initRequest(initBody, nil))
			codes[i] = rec.Code
			if rec.Code == http.StatusServiceUnavailable {
				refused <- struct{}{}
			}
		})
	}
	in, out := 0, 0
	for in+out < clients {
		select {
		case <-entered:
			in++
		case <-refused:
			out++
		}
	}
	close(release)
	wg.Wait()
	ok := 0
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	if in != limit || ok != limit {
		t.Fatalf("%d initializes reached the handler and %d opened a session, want %d each (the limit)", in, ok, limit)
	}
}

// TestMaxSessionsSeesEscapedMethod: the method is read as JSON reads it, so
// an escaped "initialize", alone or in a batch, counts.
func TestMaxSessionsSeesEscapedMethod(t *testing.T) {
	h := Wrap(sessions(), &Options{MaxSessions: 1})
	serve := func(body string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, initRequest(body, nil))
		return rec.Code
	}
	if code := serve(initBody); code != http.StatusOK {
		t.Fatalf("first initialize: %d", code)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"initi\u0061lize","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"\u0069\u006e\u0069\u0074\u0069\u0061\u006c\u0069\u007a\u0065"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"initi\u0061lize"}]`,
		` [ {"jsonrpc":"2.0","method":"notifications/initialized"}, {"jsonrpc":"2.0","id":3,"method":"initialize"} ] `,
	} {
		if code := serve(body); code != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503 (a second session over a limit of 1)", body, code)
		}
	}
}

// fakeClock is a clock that tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestIdleSessionsExpire: a full listener whose sessions have gone idle
// past SessionIdle admits new ones; an expired session is answered 404
// with a JSON-RPC error naming --session-idle, and the handler is told.
// (Sessions used to last until a restart.)
func TestIdleSessionsExpire(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	var mu sync.Mutex
	var ended []string
	inner := sessions()
	h := Wrap(inner, &Options{MaxSessions: 2, SessionIdle: time.Minute, Now: clock.Now, EndSession: func(id string) {
		mu.Lock()
		ended = append(ended, id)
		mu.Unlock()
		EndByDelete(inner, "/mcp")(id)
	}})
	do := func(body, sid string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		hdr := map[string]string{}
		if sid != "" {
			hdr["Mcp-Session-Id"] = sid
		}
		h.ServeHTTP(rec, initRequest(body, hdr))
		return rec
	}
	const ping = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	s1 := do(initBody, "").Header().Get("Mcp-Session-Id")
	s2 := do(initBody, "").Header().Get("Mcp-Session-Id")
	if code := do(initBody, "").Code; code != http.StatusServiceUnavailable {
		t.Fatalf("third session: %d, want 503", code)
	}
	clock.Add(59 * time.Second)
	if code := do(ping, s1).Code; code != http.StatusOK {
		t.Fatalf("s1 within its idle time: %d, want 200", code)
	}
	clock.Add(59 * time.Second) // s2 idle 118 s, s1 59 s
	if rec := do(ping, s2); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--session-idle") || !strings.Contains(rec.Body.String(), `"id":7`) {
		t.Fatalf("expired s2: %d %s, want 404 with a JSON-RPC error naming --session-idle", rec.Code, rec.Body)
	}
	if code := do(ping, s2).Code; code != http.StatusNotFound {
		t.Errorf("s2 again: %d, want 404", code)
	}
	s3 := do(initBody, "").Header().Get("Mcp-Session-Id")
	if s3 == "" {
		t.Fatal("no new session in the slot that s2 freed")
	}
	if code := do(initBody, "").Code; code != http.StatusServiceUnavailable {
		t.Fatalf("fourth session while s1 and s3 are live: %d, want 503", code)
	}
	clock.Add(time.Minute) // s1 idle 119 s, s3 60 s: both expire when a slot is needed
	if do(initBody, "").Header().Get("Mcp-Session-Id") == "" {
		t.Fatal("a full listener of idle sessions refused a new one")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(ended, ","); !strings.HasPrefix(got, s2+",") || !strings.Contains(got, s1) || !strings.Contains(got, s3) {
		t.Errorf("EndSession was called for %q, want %s first, then %s and %s", got, s2, s1, s3)
	}
	if code := do(ping, s1).Code; code != http.StatusNotFound {
		t.Errorf("s1 after expiry: %d, want 404", code)
	}
}

// TestActiveSessionDoesNotExpire: a session with a request in flight (a
// long GET stream) is not idle, however long it lasts.
func TestActiveSessionDoesNotExpire(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	streaming := make(chan struct{})
	stop := make(chan struct{})
	inner := sessions()
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			close(streaming)
			<-stop
			return
		}
		inner.ServeHTTP(w, r)
	}), &Options{MaxSessions: 1, SessionIdle: time.Minute, Now: clock.Now})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, initRequest(initBody, nil))
	sid := rec.Header().Get("Mcp-Session-Id")
	get := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	get.Header.Set("Mcp-Session-Id", sid)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), get)
	}()
	<-streaming
	clock.Add(time.Hour)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, initRequest(initBody, nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a new session while the only one streams: %d, want 503", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, initRequest(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid}))
	if rec.Code != http.StatusOK {
		t.Errorf("a request of the streaming session after an hour: %d, want 200", rec.Code)
	}
	close(stop)
	<-done
}

// TestSlotFreedWithoutSession: an initialize answered without a session
// (an error, a server that keeps none) gives its reserved slot back.
func TestSlotFreedWithoutSession(t *testing.T) {
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}), &Options{MaxSessions: 1})
	for i := range 5 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, initRequest(initBody, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("initialize %d without a session: %d, want 200", i, rec.Code)
		}
	}
}

// BenchmarkOpensSession is the look at each POST without a session id
// (every request of a 2026-07-28 client): a tools/call, which opens none.
func BenchmarkOpensSession(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"m4"}}}`)
	for b.Loop() {
		if opensSession(body) {
			b.Fatal("a tools/call opens a session")
		}
	}
}
