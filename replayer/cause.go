package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file replays what a server sent because of a client notification
// (DESIGN.md, Replay semantics, "Cause and effect"): the server messages
// recorded after a client's notifications/initialized, or its
// notifications/roots/list_changed, and before the next client message,
// are that notification's effects. A session sends them, in recorded order,
// through its outlets (the stdio stream, the GET stream) once the live
// client has sent the equivalent notification; a server-to-client request
// among them gets a fresh id, and what follows it waits for the client's
// reply, which is compared with the recorded one (checkReply). Effects whose
// cause never comes are never sent; Stats.NeverSent counts them.

// cause is a client notification recorded outside any request, with its
// effects.
type cause struct {
	req     matcher.Request
	effects []*followup
}

// addCause adds the recorded client notification raw as a cause and
// returns it; nil when it is none (unreadable, or a cancellation, whose
// effect is the absence of an answer).
func (e *Engine) addCause(raw json.RawMessage) *cause {
	m, err := jsonrpc.Parse(raw)
	if err != nil || m.Kind() != jsonrpc.KindNotification || m.Method == "notifications/cancelled" {
		return nil
	}
	if e.byCause == nil {
		e.byCause = map[string][]int{}
	}
	c := &cause{req: matcher.Request{Method: m.Method, Params: m.Params}}
	e.byCause[m.Method] = append(e.byCause[m.Method], len(e.causes))
	e.causes = append(e.causes, c)
	return c
}

// effects is a session's state of the causes: which came, and the
// sequences of effects being sent.
type effects struct {
	fired  map[int]bool // causes that came, by index into Engine.causes
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ended  bool
}

// caused is called with every client notification: the first recorded
// cause of its method, not yet come in this session, whose params match
// (under the cassette's matcher) has come, and its effects are sent.
func (s *session) caused(msg *jsonrpc.Message) {
	idx := s.e.byCause[msg.Method]
	if len(idx) == 0 {
		return
	}
	live := matcher.Request{Method: msg.Method, Params: msg.Params}
	s.mu.Lock()
	defer s.mu.Unlock()
	fx := &s.effects
	if fx.ended {
		return
	}
	for _, i := range idx {
		c := s.e.causes[i]
		if fx.fired[i] || !s.e.replyMatcher.Match(c.req, live).Match {
			continue
		}
		if fx.fired == nil {
			fx.fired = map[int]bool{}
			fx.ctx, fx.cancel = context.WithCancel(context.Background())
		}
		fx.fired[i] = true
		if len(c.effects) == 0 {
			return
		}
		fx.wg.Add(1)
		go func() {
			defer fx.wg.Done()
			s.sendEffects(fx.ctx, c.effects)
		}()
		return
	}
}

// sendEffects sends one cause's effects through the session's outlets, in
// order, each server-to-client request awaited before what follows it: a
// plan carried out by the executor (executor.go). What is left when ctx
// ends (the session ended), or when the session has no outlet, is counted
// as never sent.
func (s *session) sendEffects(ctx context.Context, fs []*followup) {
	plan := &answerPlan{}
	for _, f := range fs {
		plan.Steps = s.followSteps(plan.Steps, f)
	}
	for _, st := range s.carry(ctx, nil, plan, time.Now(), effectsOutlet{s}) {
		if st.Kind == stepSend {
			s.e.stats.neverSent.Add(1)
		}
	}
}

// effectsOutlet carries effects out to the session's outlets: its stdio
// stream, its GET stream.
type effectsOutlet struct{ s *session }

func (o effectsOutlet) send(m outMessage) error {
	if !o.s.toOutlets(m.raw) {
		return errNoOutlet
	}
	return nil
}

// errNoOutlet ends effects that no stream can carry.
var errNoOutlet = errors.New("the session has no stream for server messages")

func (effectsOutlet) end(*step)                          {}
func (effectsOutlet) status() func(*step)                { return nil }
func (effectsOutlet) batches() (join, withResponse bool) { return false, false }
func (effectsOutlet) outlives() bool                     { return false }

// followRequest prepares a server-to-client request that belongs to no
// client request: the message under a fresh id, and the step that awaits
// and checks its reply. ok is false when it is not sent (the live client
// lacks the capability it needs, where the recorded client had it).
func (s *session) followRequest(f *followup) (out []byte, await step, ok bool) {
	if caps, _, known := s.clientCapsFor(nil); known {
		var params json.RawMessage
		if m, err := jsonrpc.Parse(f.raw); err == nil {
			params = m.Params
		}
		if len(lacks(caps, s.e.recordedCaps(f.index), f.method, params)) > 0 {
			s.e.opts.Logger.Warn("not sent " + f.method + ": the client did not declare the capability")
			return nil, step{}, false
		}
	}
	id := s.freshID()
	out, err := jsonrpc.WithID(f.raw, id)
	if err != nil {
		s.mu.Lock()
		delete(s.awaiting, id)
		s.mu.Unlock()
		return nil, step{}, false
	}
	return out, step{Kind: stepAwaitReply, replyID: id, method: f.method, expect: f.expect, interaction: f.index + 1}, true
}

// endEffects stops the session's effects when its last outlet goes: what
// is being sent stops, and the effects of the causes that never came are
// counted as never sent.
func (s *session) endEffects() {
	s.mu.Lock()
	fx := &s.effects
	if fx.ended {
		s.mu.Unlock()
		return
	}
	fx.ended = true
	if fx.cancel != nil {
		fx.cancel()
	}
	n := 0
	for i, c := range s.e.causes {
		if !fx.fired[i] {
			n += len(c.effects)
		}
	}
	s.mu.Unlock()
	fx.wg.Wait()
	s.e.stats.neverSent.Add(int64(n))
}
