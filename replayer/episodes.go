package replayer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file is the new-episodes mode: a request that the cassette cannot
// answer is forwarded to the live server (Options.Upstream), answered with
// what the server said, and kept as a new interaction that the caller
// appends to the cassette (Engine.NewEpisodes). A repeat of it is answered
// from what was learnt, without asking the server again.

// episodes is what the live server taught the engine. Its own mutex guards
// it.
type episodes struct {
	mu         sync.Mutex // guards the fields below
	byKey      map[string]*cassettes.Interaction
	list       []cassettes.Interaction
	handshaken bool
}

// forward answers a miss from the live server; nil when there is none or
// the method is a notification.
func (s *session) forward(msg *jsonrpc.Message, live matcher.Request) *answerPlan {
	e := s.e
	u := e.opts.Upstream
	if u == nil {
		return nil
	}
	key := matcher.Default().(matcher.Keyer).Key(live)
	ep := &e.episodes
	ep.mu.Lock()
	defer ep.mu.Unlock() // one call at a time, as the live session is one
	if in, ok := ep.byKey[key]; ok {
		return s.answerWith(msg, in, 0, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !ep.handshaken && !mcp.Handshake(msg.Method) {
		// A stateful live server needs the handshake before anything else:
		// send it the recorded one.
		ep.handshaken = true
		if init := e.recordedHandshake(); init != nil {
			if _, err := u.Call(ctx, init); err != nil {
				return forwardError(msg, err)
			}
			u.Notify(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		}
	}
	in, err := u.Call(ctx, msg.Raw)
	if err != nil {
		return forwardError(msg, err)
	}
	if mcp.Handshake(msg.Method) {
		ep.handshaken = true
	}
	if ep.byKey == nil {
		ep.byKey = map[string]*cassettes.Interaction{}
	}
	ep.list = append(ep.list, *in)
	ep.byKey[key] = in
	e.opts.Logger.Info(fmt.Sprintf("new episode: %s forwarded to the live server and kept", msg.Method))
	plan := s.answerWith(msg, in, 0, nil)
	plan.Scripted = "new episode"
	return plan
}

func forwardError(msg *jsonrpc.Message, err error) *answerPlan {
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
		Code: jsonrpc.CodeInternalError, Message: "mcpmock: new-episodes: " + err.Error(),
	})}}}
}

// recordedHandshake returns the cassette's first recorded initialize
// request, or nil.
func (e *Engine) recordedHandshake() []byte {
	for i := range e.cassette.Interactions {
		in := &e.cassette.Interactions[i]
		if in.From != cassettes.FromClient || in.Request == nil {
			continue
		}
		if m, err := jsonrpc.ParseValid(in.Request); err == nil && m.Method == "initialize" {
			return in.Request
		}
	}
	return nil
}

// NewEpisodes returns the interactions learnt from the live server in the
// new-episodes mode, in the order they happened, to append to the cassette.
func (e *Engine) NewEpisodes() []cassettes.Interaction {
	e.episodes.mu.Lock()
	defer e.episodes.mu.Unlock()
	return append([]cassettes.Interaction(nil), e.episodes.list...)
}
