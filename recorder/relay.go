package recorder

import (
	"context"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/guard"
)

// Filter decides what passes between a client and a server; package
// guard's *guard.Guard is one. With a Filter the tap is no longer
// transparent, and the cassette records the conversation as the client saw
// it: the client's messages as it sent them, and the answers as they reached
// it (the filter's own refusals and replacements included). Messages that
// only the server saw (a notifications/cancelled of a timed-out call, the
// filter's own requests) and answers the client never got (a late answer
// after a timeout, a tools/list before its denied tools were removed) are
// not recorded, so that replaying the cassette reproduces the guarded
// server.
type Filter interface {
	// FromClient decides about a message from the client; session keeps
	// request ids of different clients apart ("" for the one client of a
	// stdio tap or a bridge).
	FromClient(session string, msg []byte) guard.Verdict
	// FromServer decides about a message from the server.
	FromServer(session string, msg []byte) guard.Verdict
}

// relay carries out a Filter's verdicts between the two ends of a tap, the
// same way on every pairing of transports: it forwards, answers the sender
// (recorded), holds a message for a person on a goroutine of its own while
// the other messages go on, runs the clocks of forwarded calls (Expire), and
// sends the filter's own messages to the server (unrecorded). Its ends are
// small adapters of a transport (relayEnds); T is what an end needs to know
// about the message that a verdict is about (the HTTP exchange of a
// bridge's POST, the event stream of an HTTP+SSE session; nothing on
// stdio). A relay without a Filter passes everything on. close withdraws
// the held messages, stops the clocks and waits for the relay's goroutines.
type relay[T any] struct {
	filter Filter
	ends   relayEnds[T]
	ctx    context.Context // the held messages' and the expiries'; ends at close
	cancel context.CancelFunc
	wg     sync.WaitGroup // held messages, expiries, the ends' own work (goDo)

	mu     sync.Mutex // guards timers and closed
	timers map[*time.Timer]bool
	closed bool
}

// relayEnds are a relay's two sides. Each is called from any goroutine and
// serializes its writes itself.
type relayEnds[T any] struct {
	// toClient delivers a message to the client and records it as the
	// server's: a server message the filter passed, or (own) the filter's
	// answer to the client's message at.
	toClient func(at T, msg []byte, own bool) error
	// toServer sends a message to the server: the client's message at as
	// the filter passed it, or (own) a message of the filter's (a request
	// of its own, a notifications/cancelled), which is not recorded and
	// whose answer comes back through fromServer.
	toServer func(at T, msg []byte, own bool) error
}

func newRelay[T any](ctx context.Context, f Filter, ends relayEnds[T]) *relay[T] {
	ctx, cancel := context.WithCancel(ctx)
	return &relay[T]{filter: f, ends: ends, ctx: ctx, cancel: cancel, timers: map[*time.Timer]bool{}}
}

// fromClient passes a client message through the filter and carries out
// the verdict. It returns the error of sending it to the server at once.
func (r *relay[T]) fromClient(at T, session string, msg []byte) error {
	if r.filter == nil {
		return r.ends.toServer(at, msg, false)
	}
	return r.apply(at, r.filter.FromClient(session, msg))
}

// fromServer passes a server message through the filter and carries out
// the verdict. It returns the error of delivering it to the client.
func (r *relay[T]) fromServer(at T, session string, msg []byte) error {
	if fwd := r.passServer(at, session, msg); fwd != nil {
		return r.ends.toClient(at, fwd, false)
	}
	return nil
}

// passServer is fromServer for an end that writes the server's messages
// itself (an event stream that keeps their event ids): it carries out the
// verdict but returns the message to pass on, or nil.
func (r *relay[T]) passServer(at T, session string, msg []byte) []byte {
	if r.filter == nil {
		return msg
	}
	v := r.filter.FromServer(session, msg)
	if v.Hold != nil {
		// Held for a person (a tools/list page with a changed pinned
		// tool): on the reader's goroutine, so the server's order holds.
		v = v.Hold(r.ctx)
	}
	if v.ToServer != nil && !r.isClosed() {
		r.ends.toServer(at, v.ToServer, true)
	}
	return v.Forward
}

// answer is fromClient for an end whose answers belong to the caller (a
// Streamable HTTP POST, answered on its own response): a held message is
// decided on the caller's goroutine, which no other message waits for.
func (r *relay[T]) answer(at T, session string, msg []byte) error {
	if r.filter == nil {
		return r.ends.toServer(at, msg, false)
	}
	v := r.filter.FromClient(session, msg)
	if v.Hold != nil {
		if v.ToServer != nil && !r.isClosed() {
			r.ends.toServer(at, v.ToServer, true) // what the hold waits for
		}
		v = v.Hold(r.ctx)
	}
	return r.apply(at, v)
}

// apply carries out the verdict about the client's message at: the
// answer to the client first (the refusals of a partly refused batch go
// ahead of the server's answers), then the filter's own message, then the
// forward (after its clock has started); a held message is decided on a
// goroutine of the relay's, and its verdict carried out in turn.
func (r *relay[T]) apply(at T, v guard.Verdict) error {
	if v.Hold != nil && !r.goDo(func(ctx context.Context) { r.apply(at, v.Hold(ctx)) }) {
		// Closed: the filter decides at once, with no one to ask.
		return r.apply(at, v.Hold(r.ctx))
	}
	if v.Reply != nil {
		r.ends.toClient(at, v.Reply, true)
	}
	if v.ToServer != nil && !r.isClosed() {
		r.ends.toServer(at, v.ToServer, true)
	}
	if v.Forward == nil {
		return nil
	}
	var stop func()
	if v.Timeout > 0 && v.Expire != nil {
		stop = r.clock(at, v.Timeout, v.Expire)
	}
	// A forward that failed gets no answer to wait for.
	err := r.ends.toServer(at, v.Forward, false)
	if err != nil && stop != nil {
		stop()
	}
	return err
}

// clock runs a forwarded call's clock: when d passes, expire's answer goes
// to the client, then its messages to the server. It returns the function
// that stops the clock.
func (r *relay[T]) clock(at T, d time.Duration, expire func() (toClient []byte, toServer [][]byte)) (stop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return func() {}
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		r.mu.Lock()
		delete(r.timers, t)
		r.mu.Unlock()
		r.goDo(func(context.Context) {
			// The client first: its answer does not wait for the
			// server's notifications/cancelled (a POST, on HTTP).
			c, ss := expire()
			if c != nil {
				r.ends.toClient(at, c, true)
			}
			for _, s := range ss {
				r.ends.toServer(at, s, true)
			}
		})
	})
	r.timers[t] = true
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if t.Stop() {
			delete(r.timers, t)
		}
	}
}

// goDo runs f on a goroutine of the relay's, which close waits for; not
// once the relay is closed (it reports whether it did). f's context ends
// at close.
func (r *relay[T]) goDo(f func(ctx context.Context)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f(r.ctx)
	}()
	return true
}

func (r *relay[T]) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// close withdraws the held messages (their context ends: the filter
// decides, and a refusal still reaches the client), stops the clocks, and
// waits for the relay's goroutines. After it, the relay still passes
// messages through the filter, but holds, clocks and the filter's own
// messages are no more. It is idempotent.
func (r *relay[T]) close() {
	r.mu.Lock()
	r.closed = true
	for t := range r.timers {
		t.Stop()
	}
	clear(r.timers)
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}
