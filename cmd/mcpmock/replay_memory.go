package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"runtime/debug"
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
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := max(2*size+30<<20, int64(ms.HeapAlloc)*3/2)
	debug.SetMemoryLimit(limit)
	return limit
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
	base int64             // the limit for the cassette (limitMemory)
	set  func(limit int64) // debug.SetMemoryLimit
	open int64             // the bytes read of the line not yet ended
	now  int64             // the limit set last
}

// lineHeadroom is how many times a long line's length the limit grows by
// while it is handled: the line read, its copy split into elements, the
// parsed elements, their answers and the batch answer joined.
const lineHeadroom = 8

// longLine is the length from which a line gets headroom.
const longLine = 1 << 20

func newHeadroom(r io.Reader, base int64) *headroom {
	return &headroom{r: r, base: base, now: base, set: func(l int64) { debug.SetMemoryLimit(l) }}
}

func (h *headroom) Read(p []byte) (int, error) {
	h.limit(h.open) // what was read before is handled
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
	h.limit(max(longest, h.open)) // until the next Read: the lines just ended are handled
	return n, err
}

func (h *headroom) limit(line int64) {
	want := h.base
	if line >= longLine {
		want += lineHeadroom * line
	}
	if want != h.now {
		h.set(want)
		h.now = want
	}
}
