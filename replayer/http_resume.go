package replayer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Resumption of the GET stream (Streamable HTTP, 2025-03-26 to 2025-11-25).
// Each event of a session's GET stream has an id ("get-1", "get-2"...,
// numbered per session) and the session keeps the last events it sent on
// it (at least resendEvents of them). A client that opens the GET stream
// again with Last-Event-ID gets the kept events that came after that one,
// then the stream goes on live. A resuming GET takes over from a stream
// the server still thinks open (the client's old connection may not have
// been noticed as gone yet); a GET without Last-Event-ID while one is open
// waits a moment for it to end (for the same reason), then is 409
// Conflict. A Last-Event-ID that names no event of the session's streams
// opens the GET stream when none is open (after that moment); else it gets
// a stream of its own that carries nothing but keep-alives (as a live
// server with an event store answers it): it never takes the GET stream
// from the client that holds it, who would get 409 when it reconnects.

// resendEvents is how many GET stream events a session keeps at least.
const resendEvents = 1000

// streamLog is the state of a session's GET stream; httpSession.mu guards
// it.
type streamLog struct {
	next   uint64   // the number of the next event (from 1)
	first  uint64   // the number of events[0]
	events [][]byte // the kept events, oldest first
	cancel context.CancelFunc
	done   chan struct{} // closed when the open stream has ended
}

const eventIDPrefix = "get-"

// logEvent numbers and keeps a message sent on the GET stream, and returns
// its event id.
func (hs *httpSession) logEvent(msg []byte) string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	l := &hs.stream
	if l.next == 0 {
		l.next = 1
	}
	n := l.next
	l.next++
	if len(l.events) == 0 {
		l.first = n
	}
	l.events = append(l.events, msg)
	if len(l.events) >= 2*resendEvents {
		// Keep the newest resendEvents, in a fresh array (the old one
		// is let go).
		drop := len(l.events) - resendEvents
		l.events = append([][]byte(nil), l.events[drop:]...)
		l.first += uint64(drop)
	}
	return eventIDPrefix + strconv.FormatUint(n, 10)
}

// openStream marks the session's GET stream open and returns its context
// and its done channel (for closeStream). With takeOver (Last-Event-ID
// names an event of the GET stream) it ends an open stream first; without,
// it waits up to staleStreamWait for an open one to end, then reports
// false, writing nothing.
func (hs *httpSession) openStream(r *http.Request, takeOver bool) (context.Context, chan struct{}, bool) {
	for {
		hs.mu.Lock()
		if !hs.streamed {
			hs.streamed = true
			ctx, cancel := context.WithCancel(r.Context())
			done := make(chan struct{})
			hs.stream.cancel, hs.stream.done = cancel, done
			hs.mu.Unlock()
			return ctx, done, true
		}
		cancel, done := hs.stream.cancel, hs.stream.done
		hs.mu.Unlock()
		if takeOver {
			cancel()
		} else if !waitEnd(r.Context(), done, staleStreamWait) {
			return nil, nil, false
		}
		select {
		case <-done:
		case <-r.Context().Done():
			return nil, nil, false
		}
	}
}

// staleStreamWait is how long a GET without Last-Event-ID waits for the
// open GET stream to end before it is refused: a client that closed its
// stream and opens a new one at once is often faster than the server's
// noticing that the old connection is gone (TestGETAfterTheClientClosedIt
// got 409 in 12 of 30 runs without it).
const staleStreamWait = time.Second

// waitEnd reports whether done closes within d (false when ctx ends first).
func waitEnd(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// isStreamEvent reports whether id names an event that the session's GET
// stream has sent.
func (hs *httpSession) isStreamEvent(id string) bool {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, eventIDPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(id, eventIDPrefix) || n == 0 {
		return false
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return n < hs.stream.next
}

// keepAlives ticks at the keep-alive interval of the long-lived streams
// (never when KeepAlive is negative); stop stops it.
func (h *HTTPHandler) keepAlives() (tick <-chan time.Time, stop func()) {
	if h.opts.KeepAlive <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(h.opts.KeepAlive)
	return t.C, t.Stop
}

// keepOpen holds a stream that has nothing more to carry open, with
// keep-alive comments, until the client goes away, wake is closed (nil:
// never), the session ends or the handler closes.
func (h *HTTPHandler) keepOpen(ctx context.Context, hs *httpSession, sw *sseWriter, wake <-chan struct{}) {
	tick, stop := h.keepAlives()
	defer stop()
	for {
		select {
		case <-tick:
			if sw.comment("keep-alive") != nil {
				return
			}
		case <-wake:
			return
		case <-ctx.Done():
			return
		case <-hs.done:
			return
		case <-h.done:
			return
		}
	}
}

// closeStream marks the stream of done ended.
func (hs *httpSession) closeStream(done chan struct{}) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.stream.done == done {
		hs.streamed = false
		hs.stream.cancel()
	}
	close(done)
}

// resend writes the kept events after the one lastID names.
func (hs *httpSession) resend(lastID string, sw *sseWriter, log *slog.Logger) error {
	if lastID == "" {
		return nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(lastID, eventIDPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(lastID, eventIDPrefix) {
		log.Info(fmt.Sprintf("Last-Event-ID %q names no event of this session's GET stream: nothing to resend", lastID))
		return nil
	}
	hs.mu.Lock()
	l := &hs.stream
	var missed [][]byte
	from := n + 1
	if from < l.first {
		if len(l.events) > 0 {
			log.Warn(fmt.Sprintf("resuming after %s: events %s%d to %s%d are no longer kept (the last %d are)", lastID, eventIDPrefix, from, eventIDPrefix, l.first-1, resendEvents))
		}
		from = l.first
	}
	if from >= l.first && from-l.first < uint64(len(l.events)) {
		missed = append(missed, l.events[from-l.first:]...)
	}
	hs.mu.Unlock()
	for i, msg := range missed {
		if err := sw.eventID(eventIDPrefix+strconv.FormatUint(from+uint64(i), 10), "message", msg); err != nil {
			return err
		}
	}
	return nil
}

// Resumption of a POST's event stream (Streamable HTTP, 2025-03-26 to
// 2025-11-25). When the recorded answer to a POST was an event stream with
// event ids (a resumable server), its replay in a session also gives each
// event an id (the recorded one, or "post-S-N" when that one is already
// used in the session, since ids are unique within a session) and keeps the
// stream's events. A client that lost the stream (the connection dropped,
// or it closed it) sends GET with Last-Event-ID set to the last id it got;
// it gets the events of that stream after that one, then the rest of the
// stream as the plan goes on, and the GET ends with the stream (after the
// response). The client going away does not cancel its request (the spec:
// a disconnection is not a cancellation); the session's end does. A
// recording without event ids replays without them, as before: its server
// was not resumable.

// maxPostStreams is how many POST streams a session keeps for resumption
// (the oldest ended ones are let go first).
const maxPostStreams = 64

// postStreams is a session's POST event streams; httpSession.mu guards it.
type postStreams struct {
	n     uint64             // streams opened, for the "post-S-N" ids
	ids   map[string]postRef // event id -> its stream and number
	order []*postStream      // kept streams, oldest first
}

type postRef struct {
	ps *postStream
	n  int // the event's number in its stream, from 0
}

// postStream is one POST's event stream.
type postStream struct {
	mu     sync.Mutex  // guards the fields below
	events []postEvent // every event sent, in order
	ended  bool        // the POST's plans are done
	owner  uint64      // which connection writes: 0 the POST's, n the nth resuming GET's
	wake   chan struct{}
}

type postEvent struct {
	id  string
	msg []byte
}

// changed wakes the connections that follow the stream; ps.mu is held.
func (ps *postStream) changed() {
	close(ps.wake)
	ps.wake = make(chan struct{})
}

// resumablePOST starts a kept POST stream written to sw with the recorded
// event ids. send writes an event (it never fails: the plan goes on when
// the client has gone away, for a client that resumes); end marks the
// stream ended once the POST's plans are done.
func (hs *httpSession) resumablePOST(sw *sseWriter, recorded []string) (send func([]byte) error, end func()) {
	ps := &postStream{wake: make(chan struct{})}
	hs.mu.Lock()
	l := &hs.posts
	l.n++
	stream := l.n
	if l.ids == nil {
		l.ids = map[string]postRef{}
	}
	l.order = append(l.order, ps)
	if len(l.order) > maxPostStreams {
		// Let the oldest ended stream go (streams still in flight stay).
		for i, old := range l.order {
			old.mu.Lock()
			ended, events := old.ended, old.events
			old.mu.Unlock()
			if ended {
				for _, ev := range events {
					delete(l.ids, ev.id)
				}
				l.order = slices.Delete(l.order, i, i+1)
				break
			}
		}
	}
	hs.mu.Unlock()

	send = func(msg []byte) error {
		hs.mu.Lock()
		ps.mu.Lock()
		n := len(ps.events)
		id := ""
		if n < len(recorded) {
			id = recorded[n]
		}
		if _, used := hs.posts.ids[id]; used || id == "" {
			id = fmt.Sprintf("post-%d-%d", stream, n)
		}
		hs.posts.ids[id] = postRef{ps, n}
		ps.events = append(ps.events, postEvent{id, msg})
		ps.changed()
		mine := ps.owner == 0
		ps.mu.Unlock()
		hs.mu.Unlock()
		if mine {
			sw.eventID(id, "message", msg) // an error: the client went away
		}
		return nil
	}
	end = func() {
		ps.mu.Lock()
		ps.ended = true
		ps.changed()
		ps.mu.Unlock()
	}
	return send, end
}

// resumePOST serves a GET whose Last-Event-ID names an event of one of the
// session's POST streams: the events after it, then the rest of that
// stream; then the GET stays open (keep-alives) until the client closes it,
// the stream is resumed elsewhere, the session ends or the handler closes,
// as a live server's does: a client whose resumed stream ended would
// reconnect without Last-Event-ID and get 409 while it holds the GET
// stream. It reports false, writing nothing, when the id is not one of a
// POST stream.
func (h *HTTPHandler) resumePOST(w http.ResponseWriter, r *http.Request, hs *httpSession) bool {
	lastID := r.Header.Get(mcp.HeaderLastEventID)
	if lastID == "" {
		return false
	}
	hs.mu.Lock()
	ref, ok := hs.posts.ids[lastID]
	hs.mu.Unlock()
	if !ok {
		return false
	}
	ps := ref.ps
	ps.mu.Lock()
	ps.owner++ // the stream is this connection's from now on
	me := ps.owner
	ps.changed() // a connection that followed it lets go
	ps.mu.Unlock()
	sw := newSSEWriter(w, nil)
	next := ref.n + 1
	for {
		ps.mu.Lock()
		if ps.owner != me {
			ps.mu.Unlock()
			return true // resumed again elsewhere
		}
		var evs []postEvent
		if next < len(ps.events) {
			evs = ps.events[next:]
			next = len(ps.events)
		}
		ended, wake := ps.ended, ps.wake
		ps.mu.Unlock()
		for _, ev := range evs {
			if sw.eventID(ev.id, "message", ev.msg) != nil {
				return true
			}
		}
		if ended {
			// All sent; after the end, wake closes only when the
			// stream is resumed elsewhere.
			h.keepOpen(r.Context(), hs, sw, wake)
			return true
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return true
		case <-hs.done:
			return true
		case <-h.done:
			return true
		}
	}
}
