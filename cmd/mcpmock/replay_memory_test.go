package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLimitMemory checks the soft memory limit a replay sets: 2 × the
// cassette's size + 30 MiB (at least 1.5 × the heap in use), and none when
// GOMEMLIMIT is set.
func TestLimitMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	t.Setenv("GOMEMLIMIT", "")
	const size = 70 << 20
	got := limitMemory(size)
	if want := int64(2*size + 30<<20); got < want {
		t.Errorf("limit %d, want at least %d", got, want)
	}
	if now := debug.SetMemoryLimit(-1); now != got {
		t.Errorf("the runtime's limit is %d, limitMemory said %d", now, got)
	}

	// A heap larger than the cassette's bar: the limit is 1.5 times it.
	live := make([]byte, 200<<20)
	if got := limitMemory(0); got < int64(len(live))*3/2 {
		t.Errorf("with %d bytes live, limit %d, want at least 1.5 times", len(live), got)
	}
	live[len(live)-1] = 1 // live until here

	debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "500MiB")
	if got := limitMemory(size); got != 0 {
		t.Errorf("with GOMEMLIMIT set, limitMemory set %d", got)
	}
	if now := debug.SetMemoryLimit(-1); now != before {
		t.Errorf("with GOMEMLIMIT set, the runtime's limit changed to %d", now)
	}
}

// TestHeadroom: the limit grows by lineHeadroom times a long line while it
// is read and handled (until the next Read), also when it comes in pieces,
// and is back at the base after; short lines change nothing.
func TestHeadroom(t *testing.T) {
	const base = 30 << 20
	var sets []int64
	long := strings.Repeat("x", 3*longLine)
	m := &memoryLimit{base: base, now: base, set: func(l int64) { sets = append(sets, l) }}
	h := &headroom{r: strings.NewReader("{}\n" + long + "\n{}\n"), m: m}
	buf := make([]byte, longLine) // the long line comes in four reads
	var seen []int64
	for {
		_, err := h.Read(buf)
		seen = append(seen, m.now)
		if err != nil {
			break
		}
	}
	// Reads: "{}\n" and the line's first 1 MiB - 3 bytes; 1 MiB; 1 MiB;
	// its last 3 bytes, the newline and "{}\n"; EOF. While the line is read
	// the limit grows with what was read of it; once it is ended, by its
	// whole length, until the next Read.
	const n = longLine
	want := []int64{base, base + lineHeadroom*(2*n-3), base + lineHeadroom*(3*n-3), base + lineHeadroom*3*n, base}
	if !slices.Equal(seen, want) {
		t.Errorf("the limit after each read: %v, want %v", seen, want)
	}
	if len(sets) == 0 || sets[len(sets)-1] != base {
		t.Errorf("the last limit set is not the base: %v", sets)
	}
	quiet := &memoryLimit{base: base, now: base, set: func(l int64) { t.Errorf("a short line set the limit to %d", l) }}
	short := &headroom{r: strings.NewReader(strings.Repeat("{}\n", 1000)), m: quiet}
	io.Copy(io.Discard, short)
}

// TestMemoryLimitConns: an HTTP replay's limit grows by connHeadroom for
// each open connection, counted in steps of connStep, and is back at the
// base once they are closed; the connections are an http.Server's, kept
// alive between requests.
func TestMemoryLimitConns(t *testing.T) {
	const base = 30 << 20
	var mu sync.Mutex
	var sets []int64
	m := &memoryLimit{base: base, now: base, set: func(l int64) {
		mu.Lock()
		sets = append(sets, l)
		mu.Unlock()
	}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = m.connState
	srv.Start()
	defer srv.Close()
	limit := func() int64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.now
	}

	const n = connStep + 1 // two steps
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		// A request answered: the server has seen the connection.
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := limit(), int64(base+2*connStep*connHeadroom); got != want {
		t.Errorf("with %d connections open the limit is %d, want %d", n, got, want)
	}
	mu.Lock()
	if len(sets) != 2 {
		t.Errorf("the limit was set %d times for %d connections, want 2 (a step of %d): %v", len(sets), n, connStep, sets)
	}
	mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	// The server sees each close when it next reads from the connection.
	deadline := time.Now().Add(time.Minute)
	for limit() != base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := limit(); got != base {
		t.Errorf("with every connection closed the limit is %d, want the base %d", got, base)
	}
}

// TestMemoryLimitWaiting: the limit grows by waitHeadroom for each request
// whose answer waits, counted in steps of waitStep, and is back at the
// base once they are answered.
func TestMemoryLimitWaiting(t *testing.T) {
	const base = 30 << 20
	var sets []int64
	m := &memoryLimit{base: base, now: base, set: func(l int64) { sets = append(sets, l) }}
	const n = waitStep + 1 // two steps
	for range n {
		m.wait(1)
	}
	if got, want := m.now, int64(base+2*waitStep*waitHeadroom); got != want {
		t.Errorf("with %d requests waiting the limit is %d, want %d", n, got, want)
	}
	if len(sets) != 2 {
		t.Errorf("the limit was set %d times for %d waiting requests, want 2 (a step of %d): %v", len(sets), n, waitStep, sets)
	}
	for range n {
		m.wait(-1)
	}
	if m.now != base || sets[len(sets)-1] != base {
		t.Errorf("with none waiting the limit is %d (set last to %d), want the base %d", m.now, sets[len(sets)-1], base)
	}
}
