package httpguard

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveLimited serves h behind Server(h, opts) on a loopback port.
func serveLimited(t *testing.T, h http.Handler, opts *Options) string {
	t.Helper()
	l, err := Listen(t.Context(), ":0", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(h, opts, nil)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return URL(l, "/mcp")
}

func echoBody() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "%d", len(b))
	})
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	return postReader(t, url, strings.NewReader(body), header)
}

// postReader posts what src holds (chunked when its length is not known)
// on a connection of its own.
func postReader(t *testing.T, url string, src io.Reader, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, src)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Close = true // each request on its own connection: the limits are per connection
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestBodyLimit(t *testing.T) {
	u := serveLimited(t, echoBody(), &Options{MaxBodyBytes: 100})
	if resp, body := post(t, u, strings.Repeat("x", 100), nil); resp.StatusCode != 200 || body != "100" {
		t.Errorf("100 bytes: %d %q, want 200 \"100\"", resp.StatusCode, body)
	}
	resp, body := post(t, u, strings.Repeat("x", 101), nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"code":-32000`) || !strings.Contains(body, "--max-body-bytes") {
		t.Errorf("101 bytes: %d %q, want 413 with a JSON-RPC error naming the flag", resp.StatusCode, body)
	}
}

func TestHeaderLimit(t *testing.T) {
	u := serveLimited(t, echoBody(), &Options{MaxHeaderBytes: 1024})
	if resp, _ := post(t, u, "{}", map[string]string{"X-Big": strings.Repeat("a", 500)}); resp.StatusCode != 200 {
		t.Errorf("small headers: %d, want 200", resp.StatusCode)
	}
	// net/http allows 4 KiB of slack over MaxHeaderBytes.
	if resp, _ := post(t, u, "{}", map[string]string{"X-Big": strings.Repeat("a", 8<<10)}); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("8 KiB header: %d, want 431", resp.StatusCode)
	}
}

// rawConn dials the listener of url.
func rawConn(t *testing.T, url string) (net.Conn, *bufio.Reader) {
	t.Helper()
	addr := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

func TestReadTimeout(t *testing.T) {
	u := serveLimited(t, echoBody(), &Options{ReadTimeout: 200 * time.Millisecond})
	c, r := rawConn(t, u)
	// The headers promise 100 bytes; 10 come, then nothing.
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n0123456789")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "--read-timeout") {
		t.Errorf("a stalled body: %d %q, want 408 naming --read-timeout", resp.StatusCode, b)
	}
}

func TestReadTimeoutDoesNotCutStreams(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": open\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: late\n\n")
	})
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	u := serveLimited(t, h, &Options{ReadTimeout: 50 * time.Millisecond, Now: clock})
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if l, _ := br.ReadString('\n'); l != ": open\n" {
		t.Fatalf("first line %q", l)
	}
	// Well past the read deadline that bounded the body (a timer, not a
	// sleep awaiting an event: the stream must survive the time passing).
	<-time.After(200 * time.Millisecond)
	close(release)
	br.ReadString('\n')
	if l, err := br.ReadString('\n'); l != "data: late\n" {
		t.Errorf("after the read timeout: %q, %v; want the stream to go on", l, err)
	}
}

func TestIdleTimeout(t *testing.T) {
	u := serveLimited(t, echoBody(), &Options{IdleTimeout: 100 * time.Millisecond})
	c, r := rawConn(t, u)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	start := time.Now()
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: %v, want the server to close it (EOF)", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("closed after %v, want about 100ms", d)
	}
}

// sessions is a toy Streamable HTTP server: initialize opens a session,
// DELETE ends it, an unknown id is 404.
func sessions() http.Handler {
	var mu sync.Mutex
	open := map[string]bool{}
	n := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case r.Method == http.MethodDelete:
			delete(open, id)
		case id == "" && strings.Contains(string(b), `"initialize"`):
			n++
			id = fmt.Sprint("s", n)
			open[id] = true
			w.Header().Set("Mcp-Session-Id", id)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		case !open[id]:
			http.Error(w, "no such session", http.StatusNotFound)
		default:
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
		}
	})
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`

func TestMaxSessions(t *testing.T) {
	u := serveLimited(t, sessions(), &Options{MaxSessions: 2})
	var ids []string
	for range 2 {
		resp, _ := post(t, u, initBody, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	resp, body := post(t, u, initBody, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"id":1`) || !strings.Contains(body, "--max-sessions") {
		t.Fatalf("third session: %d %q, want 503 with a JSON-RPC error for id 1", resp.StatusCode, body)
	}
	// The sessions that exist go on.
	if resp, _ := post(t, u, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": ids[0]}); resp.StatusCode != 200 {
		t.Errorf("request in an open session: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodDelete, u, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if resp, _ := post(t, u, initBody, nil); resp.StatusCode != 200 {
		t.Errorf("initialize after a DELETE: %d, want 200", resp.StatusCode)
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	u := serveLimited(t, echoBody(), &Options{RateLimit: rate.Rate{N: 3, Per: 3 * time.Second}, Now: clock})
	for i := range 3 {
		if resp, _ := post(t, u, "{}", nil); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, resp.StatusCode)
		}
	}
	resp, body := post(t, u, "{}", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || !strings.Contains(body, "--rate-limit") {
		t.Fatalf("fourth request: %d Retry-After %q %q, want 429 Retry-After 1", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if resp, _ := post(t, u, "{}", nil); resp.StatusCode != 200 {
		t.Errorf("after a second: %d, want 200 (one token back)", resp.StatusCode)
	}
	if resp, _ := post(t, u, "{}", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("again: %d, want 429", resp.StatusCode)
	}
}
