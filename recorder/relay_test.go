package recorder

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/guard"
)

// scriptFilter answers each message with the verdict its text names.
type scriptFilter map[string]guard.Verdict

func (f scriptFilter) FromClient(_ string, msg []byte) guard.Verdict { return f[string(msg)] }
func (f scriptFilter) FromServer(_ string, msg []byte) guard.Verdict { return f[string(msg)] }

// relayLog is what a relay's ends were given, in order.
type relayLog struct {
	mu   sync.Mutex // guards got
	got  []string
	sent chan string // each message as it arrives
	fail bool        // toServer fails for the client's messages
}

func newRelayLog() *relayLog { return &relayLog{sent: make(chan string, 16)} }

func (l *relayLog) ends() relayEnds[string] {
	note := func(s string) {
		l.mu.Lock()
		l.got = append(l.got, s)
		l.mu.Unlock()
		l.sent <- s
	}
	return relayEnds[string]{
		toClient: func(at string, msg []byte, own bool) error {
			note(describe("client", at, msg, own))
			return nil
		},
		toServer: func(at string, msg []byte, own bool) error {
			note(describe("server", at, msg, own))
			if l.fail && !own {
				return errors.New("the server's stdin is closed")
			}
			return nil
		},
	}
}

func describe(to, at string, msg []byte, own bool) string {
	s := to + " " + at + " " + string(msg)
	if own {
		s += " (own)"
	}
	return s
}

func (l *relayLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// TestRelayVerdicts: the relay carries out each kind of verdict through its
// ends, the message's context (at) travelling with it.
func TestRelayVerdicts(t *testing.T) {
	f := scriptFilter{
		"pass":    {Forward: []byte("pass")},
		"changed": {Forward: []byte("changed!")},
		"refused": {Reply: []byte("no")},
		"batch":   {Forward: []byte("part"), Reply: []byte("refusals")},
		"list":    {ToServer: []byte("own list")},
		"drop":    {},
	}
	tests := []struct {
		from string
		msg  string
		want []string
	}{
		{"client", "pass", []string{"server a pass"}},
		{"client", "refused", []string{"client a no (own)"}},
		{"client", "batch", []string{"client a refusals (own)", "server a part"}},
		{"server", "changed", []string{"client a changed!"}},
		{"server", "list", []string{"server a own list (own)"}},
		{"server", "drop", nil},
	}
	for _, tt := range tests {
		t.Run(tt.from+"/"+tt.msg, func(t *testing.T) {
			l := newRelayLog()
			r := newRelay(t.Context(), f, l.ends())
			if tt.from == "client" {
				r.fromClient("a", "", []byte(tt.msg))
			} else {
				r.fromServer("a", "", []byte(tt.msg))
			}
			r.close()
			if diff := cmp.Diff(tt.want, l.all()); diff != "" {
				t.Errorf("ends (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRelayNoFilter: without a filter everything passes as it came.
func TestRelayNoFilter(t *testing.T) {
	l := newRelayLog()
	r := newRelay(t.Context(), nil, l.ends())
	r.fromClient("a", "", []byte("up"))
	r.fromServer("b", "", []byte("down"))
	r.close()
	if diff := cmp.Diff([]string{"server a up", "client b down"}, l.all()); diff != "" {
		t.Errorf("ends (-want +got):\n%s", diff)
	}
}

// TestRelayHold: a held message waits on a goroutine of the relay's while
// the others pass, and its verdict is carried out once decided.
func TestRelayHold(t *testing.T) {
	decide := make(chan struct{})
	f := scriptFilter{
		"pass": {Forward: []byte("pass")},
		"held": {Hold: func(ctx context.Context) guard.Verdict {
			<-decide
			return guard.Verdict{Forward: []byte("held, allowed")}
		}},
	}
	l := newRelayLog()
	r := newRelay(t.Context(), f, l.ends())
	t.Cleanup(r.close)
	r.fromClient("a", "", []byte("held"))
	r.fromClient("b", "", []byte("pass"))
	if got := <-l.sent; got != "server b pass" {
		t.Fatalf("first to arrive = %q, want the message behind the held one", got)
	}
	close(decide)
	if got := <-l.sent; got != "server a held, allowed" {
		t.Fatalf("after the decision = %q", got)
	}
}

// TestRelayCloseWithdrawsHolds: close ends the held messages' context and
// waits for their verdicts; a message held after close is decided at once.
func TestRelayCloseWithdrawsHolds(t *testing.T) {
	f := scriptFilter{
		"held": {Hold: func(ctx context.Context) guard.Verdict {
			<-ctx.Done()
			return guard.Verdict{Reply: []byte("withdrawn")}
		}},
	}
	l := newRelayLog()
	r := newRelay(t.Context(), f, l.ends())
	r.fromClient("a", "", []byte("held"))
	r.close()
	r.fromClient("b", "", []byte("held"))
	if diff := cmp.Diff([]string{"client a withdrawn (own)", "client b withdrawn (own)"}, l.all()); diff != "" {
		t.Errorf("ends (-want +got):\n%s", diff)
	}
}

// TestRelayClock: a forwarded call whose clock runs out is answered to the
// client and cancelled upstream; a forward that failed, or a relay that
// closed, stops its clock.
func TestRelayClock(t *testing.T) {
	expire := func() ([]byte, [][]byte) { return []byte("timed out"), [][]byte{[]byte("cancelled")} }
	t.Run("expires", func(t *testing.T) {
		forwarded := make(chan struct{})
		f := scriptFilter{"slow": {Forward: []byte("slow"), Timeout: time.Millisecond, Expire: func() ([]byte, [][]byte) {
			<-forwarded // the clock may run out before the forward is done
			return expire()
		}}}
		l := newRelayLog()
		r := newRelay(t.Context(), f, l.ends())
		r.fromClient("a", "", []byte("slow"))
		close(forwarded)
		for range 3 {
			<-l.sent
		}
		r.close()
		want := []string{"server a slow", "client a timed out (own)", "server a cancelled (own)"}
		if diff := cmp.Diff(want, l.all()); diff != "" {
			t.Errorf("ends (-want +got):\n%s", diff)
		}
	})
	for _, tt := range []struct {
		name  string
		fail  bool
		close bool
	}{{"the forward failed", true, false}, {"closed", false, true}} {
		t.Run(tt.name, func(t *testing.T) {
			l := newRelayLog()
			l.fail = tt.fail
			long := scriptFilter{"slow": {Forward: []byte("slow"), Timeout: time.Hour, Expire: expire}}
			r := newRelay(t.Context(), long, l.ends())
			err := r.fromClient("a", "", []byte("slow"))
			if tt.fail != (err != nil) {
				t.Errorf("fromClient = %v, want an error %v", err, tt.fail)
			}
			if tt.close {
				r.close()
			}
			r.mu.Lock()
			n := len(r.timers)
			r.mu.Unlock()
			if n != 0 {
				t.Errorf("%d clocks still run", n)
			}
			r.close()
		})
	}
}
