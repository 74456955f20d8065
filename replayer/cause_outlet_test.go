package replayer

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEffectsWithoutAStreamAreNeverSent: a session with no stream for
// server messages (a server without sessions, over HTTP) sends none of
// what its client's notifications caused, and awaits no reply to a request
// it could not send: what could not go counts as never sent.
func TestEffectsWithoutAStreamAreNeverSent(t *testing.T) {
	var mismatches atomic.Int32
	e, err := New(loadCause(t), &Options{ReplyTimeout: 10 * time.Millisecond, OnReplyMismatch: func(ReplyMismatch) { mismatches.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession() // no outlet attached
	handleRaw(t, s, causeInitialize)
	handleRaw(t, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	handleRaw(t, s, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	s.effects.wg.Wait() // the effects ran their course
	// The log after initialized; roots/list and its log after
	// roots/list_changed. (A list change that nobody listens to is
	// dropped, as during any answer.)
	if got := e.Stats().NeverSent; got != 3 {
		t.Errorf("NeverSent = %d, want 3", got)
	}
	if n := mismatches.Load(); n != 0 {
		t.Errorf("%d reply mismatches, want none: no roots/list went out to be answered", n)
	}
}
