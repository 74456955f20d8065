package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts s on a loopback port and returns its address; the server is
// closed when the test ends.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
		}
	})
	return l.Addr().String()
}

// dial connects to addr; the connection closes when the test ends.
func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// countingListener counts the writes made to its connections.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.l.writes.Add(1)
	return c.Conn.Write(p)
}

func TestShortAnswerIsOneWrite(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "event: message\ndata: {}\n\n")
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	go s.Serve(cl)
	defer s.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	const n = 20
	for i := range n {
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.ContentLength != int64(len(b)) || string(b) != "event: message\ndata: {}\n\n" {
			t.Fatalf("request %d: Content-Length %d, body %q", i, resp.ContentLength, b)
		}
	}
	if got := cl.writes.Load(); got != n {
		t.Errorf("%d answers took %d writes, want one each", n, got)
	}
}

func TestClientGoneEndsContext(t *testing.T) {
	ended := make(chan error, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			ended <- nil
		case <-time.After(10 * time.Second):
			ended <- errors.New("the request's context did not end when its client went away")
		}
	})}
	addr := serve(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TransferEncoding == nil || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("a flushed stream went as %v, want chunked", resp.TransferEncoding)
	}
	c.Close()
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
}

// A request that comes while a long handler runs (after the watch started)
// is kept and answered next, and does not end the first one's context.
func TestRequestDuringLongHandler(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(10 * WatchAfter)
		}
		if r.Context().Err() != nil {
			http.Error(w, "context ended", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, r.URL.Path)
	})}
	addr := serve(t, s)
	c := dial(t, addr)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(3 * WatchAfter)
	io.WriteString(c, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	for _, want := range []string{"/slow", "/next"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != want {
			t.Errorf("got %d %q, want 200 %q", resp.StatusCode, b, want)
		}
	}
}

func TestHeaderAndIdleTimeouts(t *testing.T) {
	s := &Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		ReadHeaderTimeout: 100 * time.Millisecond,
		IdleTimeout:       200 * time.Millisecond,
	}
	addr := serve(t, s)
	closedWithin := func(c net.Conn, limit time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(limit))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("the server did not close the connection within %v: %v", limit, err)
		}
		return time.Since(start)
	}
	slow := dial(t, addr)
	io.WriteString(slow, "GET / HTTP/1.1\r\nHost: x\r\n") // never ends
	closedWithin(slow, 5*time.Second)

	// A request whose line comes with the last one's, pipelined, and whose
	// headers never end.
	piped := dial(t, addr)
	io.WriteString(piped, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n")
	closedWithin(piped, 5*time.Second)

	idle := dial(t, addr)
	io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(idle)
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	if d := closedWithin(idle, 5*time.Second); d < 100*time.Millisecond {
		t.Errorf("an idle connection was closed after %v, before its idle timeout of 200ms", d)
	}
}

func TestShutdownWaitsForRequests(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	var shutdownCalled atomic.Bool
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})}
	s.RegisterOnShutdown(func() { shutdownCalled.Store(true) })
	addr := serve(t, s)
	idle, err := net.Dial("tcp", addr) // never sends a request... yet
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "")
	busy := dial(t, addr)
	io.WriteString(busy, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a request was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the request in flight was cut: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "done" || !resp.Close {
		t.Errorf("answer during shutdown: %q, Connection: close %v; want %q and close", b, resp.Close, "done")
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return once the request was answered")
	}
	if !shutdownCalled.Load() {
		t.Error("the function registered with RegisterOnShutdown was not called")
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("the listener still accepts after Shutdown")
	}
}

func TestShutdownTimesOut(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until Close
	})}
	addr := serve(t, s)
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a request that never ends returned %v, want the context's error", err)
	}
	s.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("Close did not cut the connection: %v", err)
	}
}

func TestHijackAndAbort(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	s := &Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/hijack":
				conn, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					panic(err)
				}
				rw.WriteString("raw bytes")
				rw.Flush()
				conn.Close()
			case "/abort":
				panic(http.ErrAbortHandler)
			case "/panic":
				panic("boom")
			}
		}),
		ErrorLog: log.New(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logged.Write(p)
		}), "", 0),
	}
	var states []http.ConnState
	var smu sync.Mutex
	s.ConnState = func(_ net.Conn, st http.ConnState) {
		smu.Lock()
		states = append(states, st)
		smu.Unlock()
	}
	addr := serve(t, s)
	for _, tc := range []struct{ path, want string }{{"/hijack", "raw bytes"}, {"/abort", ""}, {"/panic", ""}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET "+tc.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: read %q, %v; want %q then the connection closed", tc.path, b, err, tc.want)
		}
	}
	mu.Lock()
	log := logged.String()
	mu.Unlock()
	if !strings.Contains(log, "panic serving") || !strings.Contains(log, "boom") || strings.Count(log, "panic serving") != 1 {
		t.Errorf("the error log holds %q; want the one panic that is not http.ErrAbortHandler", log)
	}
	counts := func() map[http.ConnState]int {
		smu.Lock()
		defer smu.Unlock()
		count := map[http.ConnState]int{}
		for _, st := range states {
			count[st]++
		}
		return count
	}
	// A connection's closed state comes just after the close that its
	// client saw: wait for it a while.
	for end := time.Now().Add(5 * time.Second); counts()[http.StateClosed] < 2 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	count := counts()
	smu.Lock()
	defer smu.Unlock()
	if count[http.StateNew] != 3 || count[http.StateHijacked] != 1 || count[http.StateClosed] != 2 {
		t.Errorf("connection states %v: want 3 new, 1 hijacked, 2 closed", states)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Handlers that end about when the watch starts: the watch must never
// outlive its abort (a watch that cleared its deadline after the abort
// set it would read on, and the connection would hang).
func TestWatchStartsAsHandlerEnds(t *testing.T) {
	var n atomic.Int64
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// From a little before WatchAfter to a little after it.
		d := WatchAfter - 200*time.Microsecond + time.Duration(n.Add(1)%40)*10*time.Microsecond
		time.Sleep(d)
		io.WriteString(w, "ok")
	})}
	addr := serve(t, s)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	for i := range 400 {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
}

// A watch held back until its handler has surely ended and stopped it
// must still end: else the connection sits in the handler's end with no
// deadline, and neither its idle timeout nor Shutdown closes it.
func TestLateWatchEnds(t *testing.T) {
	late := func() { time.Sleep(4 * WatchAfter) }
	watchStarts.Store(&late)
	defer watchStarts.Store(nil)
	s := &Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(WatchAfter + WatchAfter/2)
			io.WriteString(w, "ok")
		}),
		IdleTimeout: 100 * time.Millisecond,
	}
	addr := serve(t, s)
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the idle connection was not closed within 5s (its watch outlived its abort): %v", err)
	}
}

// The rest of a body that the handler left unread is read before the
// answer, for at most discardTimeout: a client that trickles it gets its
// answer then, and the connection closes.
func TestUnreadBodyTrickled(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused", http.StatusForbidden)
	})}
	addr := serve(t, s)
	c := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nsome of it")
	c.SetReadDeadline(time.Now().Add(discardTimeout + 5*time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body trickles: %v", err)
	}
	if resp.StatusCode != http.StatusForbidden || !resp.Close {
		t.Errorf("answer %d, Connection: close %v; want 403 and close", resp.StatusCode, resp.Close)
	}
}

// TestHeaderMapUsedAgain: the header map of a response is the next
// response's on the connection, emptied: each handler starts with no
// header and answers with its own alone, also after one whose map grew
// past maxKeptHeaders (not kept).
func TestHeaderMapUsedAgain(t *testing.T) {
	seen := make(chan int, 16) // the headers each handler found set as it started
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- len(w.Header())
		switch r.URL.Path {
		case "/many":
			for i := range maxKeptHeaders + 1 {
				w.Header().Set("X-Many-"+strconv.Itoa(i), "v")
			}
		case "/one":
			w.Header().Set("X-One", "1")
		}
		io.WriteString(w, "ok")
	}), ErrorLog: log.New(io.Discard, "", 0)}
	c := dial(t, serve(t, s))
	br := bufio.NewReader(c)
	for _, path := range []string{"/one", "/plain", "/many", "/plain", "/one", "/one"} {
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		io.ReadAll(resp.Body)
		if got, want := resp.Header.Get("X-One") != "", path == "/one"; got != want {
			t.Errorf("%s: X-One in the answer %v, want %v", path, got, want)
		}
		if got, want := resp.Header.Get("X-Many-0") != "", path == "/many"; got != want {
			t.Errorf("%s: X-Many-0 in the answer %v, want %v", path, got, want)
		}
	}
	for i := range 6 {
		if n := <-seen; n != 0 {
			t.Errorf("handler %d started with %d headers set, want none", i, n)
		}
	}
}
