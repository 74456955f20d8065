package httpguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// DefaultMaxInFlightBytes bounds the bytes of all request bodies that a
// listener holds at once (Options.MaxInFlightBytes left zero): 256 MiB,
// four bodies of the default --max-body-bytes.
const DefaultMaxInFlightBytes = 256 << 20

// errBudget is readBody's error for a body that does not fit in what is
// left of the in-flight budget.
var errBudget = errors.New("the in-flight budget is spent")

// budget counts the bytes of the request bodies in flight against a bound.
type budget struct {
	max int64 // < 0: no bound

	mu   sync.Mutex // guards used
	used int64
}

// take reserves n bytes and reports whether they fit.
func (b *budget) take(n int64) bool {
	if b.max < 0 || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes that take reserved.
func (b *budget) give(n int64) {
	if b.max < 0 || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// Body is the body of a request that the guard has read whole, the bytes
// that the handler behind it gets as r.Body. Bytes hands them over without
// a copy.
type Body struct {
	b []byte
	r bytes.Reader
	// own is the pooled buffer b lies in (nil: b is the body's own), and
	// released says that the handler keeps nothing of b (Release).
	own      *[]byte
	released bool
}

// Release tells the guard that the handler behind it keeps nothing of the
// request r past its return: not the bytes that Bytes handed over nor any
// part of them, not r, its header map, its URL or its context, and not
// its ResponseWriter (nothing writes to it later, nothing waits on the
// context). The guard then uses their memory again for a later request
// once the handler has returned: the body's buffer, its own state, and
// the server's request and response (h1.Release). A handler that may keep
// any of them (a recording keeps the bytes; an event stream, the writer)
// does not call it.
func Release(r *http.Request) {
	if b, ok := r.Body.(*Body); ok {
		b.released = true
	}
}

// bodyBufs are the buffers of bodies up to maxPooledBody bytes, used again
// once their handler has released them (Release).
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest body read into a pooled buffer: an MCP
// request is most often a few hundred bytes.
const maxPooledBody = 64 << 10

// buffer returns memory for a body of n bytes and a byte to spare, from
// the pool when n is small enough.
func (b *Body) buffer(n int64) []byte {
	if n > maxPooledBody {
		return make([]byte, n, n+1)
	}
	b.own = bodyBufs.Get().(*[]byte)
	if int64(cap(*b.own)) < n+1 {
		*b.own = make([]byte, 0, max(n+1, 512))
	}
	return (*b.own)[: n : n+1]
}

// recycle puts the body's buffer back in the pool when its handler, now
// returned, released it. Under the race detector the memory is overwritten
// first, so that a handler that kept a part of it reads garbage and its
// tests fail.
func (b *Body) recycle() {
	if !b.released || b.own == nil {
		return
	}
	if raceEnabled {
		all := (*b.own)[:cap(*b.own)]
		for i := range all {
			all[i] = '#'
		}
	}
	bodyBufs.Put(b.own)
	b.own, b.b = nil, nil
}

// Read reads the body, as any request body.
func (b *Body) Read(p []byte) (int, error) { return b.r.Read(p) }

// Close does nothing: the bytes stay until the request is done.
func (b *Body) Close() error { return nil }

// Bytes returns the body that the guard read for r, without a copy, and
// true; or nil and false when r.Body is not such a body or was already read
// from. The bytes are the handler's to read, not to change: they may be
// recorded as they are. They stay the handler's after it returns unless it
// released them (Release).
func Bytes(r *http.Request) ([]byte, bool) {
	b, ok := r.Body.(*Body)
	if !ok || b.r.Len() != len(b.b) {
		return nil, false
	}
	return b.b, true
}

// readBody reads the whole body within the size and time limits and the
// in-flight budget, into one buffer of the body's size when its length is
// known. What it takes of the budget is added to *held, which the caller
// gives back (exchange.giveBack) once the request is done, also after an
// error. The read
// deadline is lifted after a successful read, so that a long answer stream
// is not cut by it. After an error it stays, so that net/http does not wait
// for the rest of the body before it writes the error; the connection is
// then closed.
func (l *limits) readBody(w http.ResponseWriter, r *http.Request, held *int64, into *Body) (body []byte, err error) {
	limit := l.maxBody
	if l.bodies.max >= 0 && (limit < 0 || l.bodies.max < limit) {
		limit = l.bodies.max // a body larger than the whole budget can never pass
	}
	if r.ContentLength > 0 && limit >= 0 && r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength > 0 && !l.bodies.take(r.ContentLength) {
		return nil, errBudget
	}
	if r.ContentLength > 0 {
		*held = r.ContentLength
	}
	rc := http.NewResponseController(w)
	if l.readTimeout > 0 {
		rc.SetReadDeadline(time.Now().Add(l.readTimeout))
	}
	src := r.Body
	if limit >= 0 && r.ContentLength < 0 {
		// A body of known length is within the limit (above), and the
		// server's reader ends it at that length.
		src = http.MaxBytesReader(w, r.Body, limit)
	}
	if r.ContentLength >= 0 {
		body = into.buffer(r.ContentLength) // a byte to spare, to find more than declared
		if _, err = io.ReadFull(src, body); err == nil {
			if n, _ := src.Read(body[len(body):cap(body)]); n > 0 {
				err = errors.New("the body is longer than its Content-Length")
			}
		}
	} else {
		body, err = l.readGrowing(src, held)
	}
	if err == nil && l.readTimeout > 0 {
		rc.SetReadDeadline(time.Time{})
	}
	return body, err
}

// readGrowing reads a body of unknown length (chunked), doubling its buffer
// and taking each growth from the budget first; *held is what it took.
func (l *limits) readGrowing(src io.Reader, held *int64) ([]byte, error) {
	b := []byte(nil)
	for {
		if len(b) == cap(b) {
			grow := int64(max(32<<10, cap(b)))
			if !l.bodies.take(grow) {
				return nil, errBudget
			}
			*held += grow
			b = append(b[:cap(b)], make([]byte, grow)...)[:len(b)]
		}
		n, err := src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// maxDrain bounds what refuseBody reads of a refused body and drops.
const maxDrain = DefaultMaxBodyBytes

// refuseBody answers the error of readBody. A body refused before it was
// read (over the budget, or a Content-Length over the limit) is then read
// and dropped (up to maxDrain, within the read timeout) so that the client,
// still sending it, gets the answer rather than a reset connection.
func (l *limits) refuseBody(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Connection", "close")
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errBudget):
		w.Header().Set("Retry-After", "1")
		rpcError(w, http.StatusServiceUnavailable, nil, fmt.Sprintf("Service Unavailable: the request bodies in flight would exceed %d bytes, this listener's budget for all of them together (--max-inflight-bytes); retry after 1s", l.bodies.max))
		l.drain(w, r)
	case errors.As(err, &mbe) && mbe.Limit == l.bodies.max && (l.maxBody < 0 || l.maxBody > l.bodies.max):
		rpcError(w, http.StatusRequestEntityTooLarge, nil, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes, the budget of all bodies in flight (--max-inflight-bytes)", mbe.Limit))
		l.drain(w, r)
	case errors.As(err, &mbe):
		rpcError(w, http.StatusRequestEntityTooLarge, nil, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (--max-body-bytes)", mbe.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		rpcError(w, http.StatusRequestTimeout, nil, fmt.Sprintf("Request Timeout: the body did not arrive within %v (--read-timeout)", l.readTimeout))
	default:
		rpcError(w, http.StatusBadRequest, nil, "Bad Request: reading the body: "+err.Error())
	}
}

// drain sends the answer written so far, then reads what is left of the
// body and drops it, through a small buffer.
func (l *limits) drain(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	rc.Flush()
	if l.readTimeout > 0 {
		rc.SetReadDeadline(time.Now().Add(l.readTimeout))
	}
	io.CopyN(io.Discard, r.Body, maxDrain)
}
