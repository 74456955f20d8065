package replayer

import (
	"context"
	"errors"
	"sync"
	"time"
)

// httpSession is one stateful session: Streamable HTTP with an
// Mcp-Session-Id, or one HTTP+SSE connection.
type httpSession struct {
	id string
	s  *session

	sse bool // an HTTP+SSE session (set before it is shared)
	// ephemeral marks the session of one POST to the replay of a server
	// without sessions (protocol_sessionless.go): nothing outlives the
	// POST (no GET stream, no resumption).
	ephemeral bool

	mu    sync.Mutex // guards queue, copies, pushed, written, flushed, streamed, stream and ended
	queue [][]byte   // messages waiting for the stream
	// copies holds the bytes of an HTTP+SSE session's queued messages:
	// they are copied when queued, so that the plans that sent them use
	// their memory again (releaseAll), and take hands them to the stream
	// with the queue, in two buffers that trade places.
	copies []byte
	// pushed and written count the messages queued for the stream and
	// written to it; flushed is closed (and replaced) at each write.
	pushed, written uint64
	flushed         chan struct{}
	streamed        bool // a GET stream is open
	// The GET stream's events, for Last-Event-ID (http_resume.go).
	stream streamLog
	posts  postStreams // the POST streams kept for Last-Event-ID (http_resume.go)
	calls  inflight    // requests in flight (executor.go)
	ended  bool
	detach func()        // removes the session's outlet for Notify
	wake   chan struct{} // signals the stream that queue grew (capacity 1)
	done   chan struct{} // closed when the session ends
	// pushTo and pushWrittenTo are push and pushWritten as funcs, made
	// once (newHTTPSession), not at each POST; nil when ephemeral.
	pushTo, pushWrittenTo func([]byte)
	// deliverTo is deliver as a func, made once; nil when ephemeral.
	deliverTo func([]byte, bool) error
}

// newHTTPSession returns a session of the HTTP transports over s.
func newHTTPSession(s *session, waiting func(delta int), ephemeral bool) *httpSession {
	hs := &httpSession{s: s, ephemeral: ephemeral, wake: make(chan struct{}, 1), done: make(chan struct{})}
	hs.calls.waiting = waiting
	if !ephemeral {
		hs.pushTo, hs.pushWrittenTo, hs.deliverTo = hs.push, hs.pushWritten, hs.deliver
	}
	return hs
}

// maxQueued bounds the messages a session keeps for a GET stream that is
// not open.
const maxQueued = 10000

// end cancels what is in flight and ends the session's stream.
func (hs *httpSession) end() {
	hs.mu.Lock()
	if hs.ended {
		hs.mu.Unlock()
		return
	}
	hs.ended = true
	hs.calls.end(errSessionEnded)
	close(hs.done)
	detach := hs.detach
	hs.mu.Unlock()
	// Outside hs.mu: detaching waits for what the session's client
	// notifications caused, which pushes to the stream (cause.go).
	if detach != nil {
		detach()
	}
}

var errSessionEnded = errors.New("session ended")

// streaming reports whether a GET stream is open.
func (hs *httpSession) streaming() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.streamed
}

// push queues a message for the session's stream.
func (hs *httpSession) push(msg []byte) { hs.enqueue(msg) }

// deliver is push as a postOutlet's deliver: an HTTP+SSE session's answers
// go on its stream.
func (hs *httpSession) deliver(msg []byte, _ bool) error {
	hs.enqueue(msg)
	return nil
}

// enqueue queues a message for the session's stream and returns its
// number, 0 when it was dropped (the queue is full).
func (hs *httpSession) enqueue(msg []byte) uint64 {
	var n uint64
	hs.mu.Lock()
	if len(hs.queue) < maxQueued {
		if hs.sse {
			at := len(hs.copies)
			hs.copies = append(hs.copies, msg...)
			msg = hs.copies[at:len(hs.copies):len(hs.copies)]
		}
		hs.queue = append(hs.queue, msg)
		hs.pushed++
		n = hs.pushed
	}
	hs.mu.Unlock()
	select {
	case hs.wake <- struct{}{}:
	default:
	}
	return n
}

// flushWait bounds how long pushWritten waits for the stream.
const flushWait = time.Second

// pushWritten queues a message for the session's stream and, while a GET
// stream is open, waits (at most flushWait) until it is written: a server
// message that came before a POST's response, live, then reaches the
// client before the response, as the two streams are two connections.
func (hs *httpSession) pushWritten(msg []byte) {
	n := hs.enqueue(msg)
	t := time.NewTimer(flushWait)
	defer t.Stop()
	for n > 0 {
		hs.mu.Lock()
		done, flushed := !hs.streamed || hs.written >= n || hs.ended, hs.flushed
		if flushed == nil {
			hs.flushed = make(chan struct{})
			flushed = hs.flushed
		}
		hs.mu.Unlock()
		if done {
			return
		}
		select {
		case <-flushed:
		case <-t.C:
			return
		case <-hs.done:
			return
		}
	}
}

// wrote notes that the stream wrote a message.
func (hs *httpSession) wrote() {
	hs.mu.Lock()
	hs.written++
	if hs.flushed != nil {
		close(hs.flushed)
		hs.flushed = nil
	}
	hs.mu.Unlock()
}

// take returns the messages queued for the stream and the copies they
// lie in, and queues the next in written and writtenCopies, the last the
// stream took and wrote: two queues serve a session's messages, one filled
// while the other is written.
func (hs *httpSession) take(written [][]byte, writtenCopies []byte) ([][]byte, []byte) {
	clear(written)
	if cap(written) > maxKeptQueue {
		written = nil
	}
	if cap(writtenCopies) > maxKeptCopies {
		writtenCopies = nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	q, copies := hs.queue, hs.copies
	hs.queue, hs.copies = written[:0], writtenCopies[:0]
	return q, copies
}

// maxKeptQueue and maxKeptCopies are the longest queue and copies that
// take keeps for the next.
const (
	maxKeptQueue  = 256
	maxKeptCopies = 64 << 10
)

// stream writes the session's queued messages to an SSE stream until the
// session ends, the client goes away or the handler closes.
func (h *HTTPHandler) stream(ctx context.Context, hs *httpSession, sw *sseWriter) {
	tick, stop := h.keepAlives()
	defer stop()
	var q [][]byte
	var copies []byte
	for {
		q, copies = hs.take(q, copies)
		for _, msg := range q {
			var err error
			if hs.sse {
				err = sw.event("message", msg)
			} else {
				// The GET stream: each event gets an id and is kept
				// for a client that resumes (http_resume.go).
				err = sw.eventID(hs.logEvent(msg), "message", msg)
			}
			if err != nil {
				return
			}
			hs.wrote()
		}
		select {
		case <-hs.wake:
		case <-tick:
			if sw.comment("keep-alive") != nil {
				return
			}
		case <-hs.done:
			return
		case <-h.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// laterOutlet is where server messages that follow an answer go: the
// session's GET stream; nil (dropped) without a session that outlives the
// POST.
func (hs *httpSession) laterOutlet() func([]byte) {
	if hs == nil || hs.ephemeral {
		return nil
	}
	return hs.pushTo
}
