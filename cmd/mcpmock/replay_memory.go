package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// limitMemory keeps the replay of a cassette of size bytes within the
// memory the design allows, 2 × its size + 30 MiB. Without a limit the
// collector lets the heap grow to twice what is live before it runs, and a
// long replay of a 70 MiB cassette goes above that (173 MiB against 172
// after 400,000 calls). GOMEMLIMIT, when set, wins. The limit is soft: it
// never fails an allocation, and it is never set below 1.5 × the heap in
// use after the load, so that a cassette that takes more memory than usual
// does not keep the collector running. It returns the limit it set, or 0.
func limitMemory(size int64) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	// The heap in use from runtime/metrics: runtime.ReadMemStats stops the
	// world and flushes every cache, 2 ms of a replay's start (perf).
	inUse := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(inUse)
	limit := max(2*size+30<<20, int64(inUse[0].Value.Uint64())*3/2)
	debug.SetMemoryLimit(limit)
	return limit
}

// memoryLimit is the soft memory limit of a replay while it runs: the
// cassette's base (limitMemory) plus headroom for what the process handles
// at the moment, the long line being read (stdio) and the open HTTP
// connections.
type memoryLimit struct {
	base int64             // the limit for the cassette (limitMemory)
	set  func(limit int64) // debug.SetMemoryLimit

	mu      sync.Mutex // guards what follows
	line    int64      // the length of the line being handled
	conns   int64      // open HTTP connections
	waiting int64      // requests whose answers wait (replayer.Options.Waiting)
	now     int64      // the limit set last
}

func newMemoryLimit(base int64) *memoryLimit {
	return &memoryLimit{base: base, now: base, set: func(l int64) { debug.SetMemoryLimit(l) }}
}

// lineHeadroom is how many times a long line's length the limit grows by
// while it is handled: the line read, its copy split into elements, the
// parsed elements, their answers and the batch answer joined.
const lineHeadroom = 8

// longLine is the length from which a line gets headroom.
const longLine = 1 << 20

// connHeadroom is what the limit grows by for each open HTTP connection:
// its goroutine's stack, its buffers and the request in flight, with the
// collector's room on top. Under the bare limit, 1,000 sessions (a
// connection each) kept the collector running back to back: a call cost
// 219 µs of CPU against 63 µs with no limit, where the process's resident
// memory grew by 57 KB a connection (VmHWM of 1 and of 1,000 concurrent
// sessions of 20 calls each). It counts in steps of connStep connections,
// so that the limit is not set again at every connection.
const (
	connHeadroom = 64 << 10
	connStep     = 16
)

// waitHeadroom is what the limit grows by for each request whose answer
// waits (a scripted delay, a reply of the client's): its message, plan,
// context and timer, about 3 KB of resident memory a request (VmHWM of
// 10,000 requests delayed together), with the collector's room on top.
// Under the bare limit, 10,000 requests pending at once kept the collector
// running: a request cost 37 µs of CPU against 15 µs for 1,000 (`go run
// ./bench -only growth -growth-only pending`). It counts in steps of
// waitStep requests.
const (
	waitHeadroom = 8 << 10
	waitStep     = 64
)

// wait counts requests that start (+1) or end (-1) waiting for their
// answer (replayer.Options.Waiting).
func (m *memoryLimit) wait(delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waiting += int64(delta)
	m.update()
}

// handling sets the length of the line being handled.
func (m *memoryLimit) handling(line int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.line = line
	m.update()
}

// connState counts the open connections of an http.Server (its
// ConnState).
func (m *memoryLimit) connState(_ net.Conn, state http.ConnState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch state {
	case http.StateNew:
		m.conns++
	case http.StateHijacked, http.StateClosed:
		m.conns--
	default:
		return
	}
	m.update()
}

func (m *memoryLimit) update() {
	want := m.base
	if m.line >= longLine {
		want += lineHeadroom * m.line
	}
	steps := (m.conns + connStep - 1) / connStep
	want += steps * connStep * connHeadroom
	steps = (m.waiting + waitStep - 1) / waitStep
	want += steps * waitStep * waitHeadroom
	if want != m.now {
		m.set(want)
		m.now = want
	}
}

// headroom is the client's input of a stdio replay, read through: while a
// long line is read and answered (a batch of 100,000 requests is a line of
// 10 MB, and its answer 8 MB more), the soft memory limit is raised by
// lineHeadroom times the line's length, and it is back at base once the
// reader asks for more, which it does only when the line before is
// answered (or left to a timer). Under the bare limit, a batch whose
// handling needs more memory than the limit kept the collector running
// back to back: an element of a batch of 100,000 cost three times one of
// a batch of 1,000 (`go run ./bench -only growth -growth-only batch`).
type headroom struct {
	r    io.Reader
	m    *memoryLimit
	open int64 // the bytes read of the line not yet ended
}

func (h *headroom) Read(p []byte) (int, error) {
	h.m.handling(h.open) // what was read before is handled
	n, err := h.r.Read(p)
	longest := int64(0)
	for rest := p[:n]; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			h.open += int64(len(rest))
			break
		}
		longest = max(longest, h.open+int64(i))
		h.open = 0
		rest = rest[i+1:]
	}
	h.m.handling(max(longest, h.open)) // until the next Read: the lines just ended are handled
	return n, err
}
