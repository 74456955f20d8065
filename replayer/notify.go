package replayer

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// This file routes server notifications that belong to no request (list
// changes, resource updates) to where a live client listens: the stdio
// stream or the GET stream of a stateful session, or the
// subscriptions/listen streams of 2026-07-28, each with its live
// subscription id. Notify sends one from Go; Fault.Notify scripts one.

// listener is one open subscriptions/listen request of a session.
type listener struct {
	id     jsonrpc.ID
	filter listenFilter
	ch     chan []byte   // notifications waiting for the stream
	done   chan struct{} // closed when the server ends the subscription
}

// listenFilter is the "notifications" of a subscriptions/listen request.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

func (f *listenFilter) wants(method string, params json.RawMessage) bool {
	switch method {
	case "notifications/tools/list_changed":
		return f.ToolsListChanged
	case "notifications/prompts/list_changed":
		return f.PromptsListChanged
	case "notifications/resources/list_changed":
		return f.ResourcesListChanged
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(params, &p)
		for _, u := range f.ResourceSubscriptions {
			if u == p.URI {
				return true
			}
		}
	}
	return false
}

// attach registers an outlet for the session's server-initiated messages
// (a stdio stream, a GET stream); the returned func removes it.
func (s *session) attach(send func([]byte)) (detach func()) {
	s.mu.Lock()
	s.nextSink++
	n := s.nextSink
	s.sinks[n] = send
	s.mu.Unlock()
	s.e.track(s, 1)
	return func() {
		s.mu.Lock()
		_, ok := s.sinks[n]
		delete(s.sinks, n)
		last := ok && len(s.sinks) == 0
		s.mu.Unlock()
		if ok {
			s.e.track(s, -1)
		}
		if last {
			s.endEffects() // cause.go
		}
	}
}

// track counts a session's outlets; Notify reaches the sessions that have
// any.
func (e *Engine) track(s *session, d int) {
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	if e.live[s] += d; e.live[s] <= 0 {
		delete(e.live, s)
	}
}

// Notify sends a server notification (such as
// "notifications/tools/list_changed") with params (nil for none) to every
// session that has a client listening: stdio clients, stateful HTTP
// sessions (on their GET stream), and 2026-07-28 subscriptions/listen
// streams that asked for it. A list change moves each session to the next
// generation of that list: a later list request answers the list recorded
// after the change, when the cassette has one. It returns the number of
// sessions reached.
func (e *Engine) Notify(method string, params json.RawMessage) int {
	e.liveMu.Lock()
	sessions := make([]*session, 0, len(e.live))
	for s := range e.live {
		sessions = append(sessions, s)
	}
	e.liveMu.Unlock()
	n := 0
	for _, s := range sessions {
		if s.notifyClient(method, params) {
			n++
		}
	}
	return n
}

// notifyClient sends a server notification to this session's client (see
// Engine.Notify). It reports whether a stream took it.
func (s *session) notifyClient(method string, params json.RawMessage) bool {
	return s.publish(notification(method, params))
}

func notification(method string, params json.RawMessage) []byte {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if len(params) > 0 {
		m["params"] = params
	}
	out, _ := json.Marshal(m)
	return out
}

// publish delivers a notification that belongs to no request: to the
// session's subscriptions/listen streams that want it (with their
// subscription id), or else, outside the 2026-07-28 era, to its outlets.
// A list change is dropped when the recorded server did not declare it,
// and counts as a change of the list either way.
func (s *session) publish(raw []byte) bool { return s.publishTo(raw, nil) }

// publishTo is publish with the session's outlets replaced by send, when
// not nil: the outlet of the plan that sends the notification, which keeps
// its place among the plan's messages.
func (s *session) publishTo(raw []byte, send func([]byte)) bool {
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return false
	}
	if mcp.ListChanged(m.Method) {
		k := mcp.ListKind(m.Method)
		s.mu.Lock()
		s.gens[k]++
		s.mu.Unlock()
		if s.e.caps.known && !s.e.caps.listChanged[k] {
			s.e.opts.Logger.Warn("dropped " + m.Method + ": the recorded server did not declare " + k + ".listChanged")
			return false
		}
	}
	s.mu.Lock()
	listeners := make([]*listener, 0, len(s.listeners))
	for _, l := range s.listeners {
		listeners = append(listeners, l)
	}
	sinks := s.outletsLocked()
	modern := s.modern
	s.mu.Unlock()
	if len(listeners) > 0 || modern {
		sent := false
		for _, l := range listeners {
			if !l.filter.wants(m.Method, m.Params) {
				continue
			}
			out, err := withSubscriptionID(raw, l.id)
			if err != nil {
				continue
			}
			select {
			case l.ch <- out:
				sent = true
			default:
				s.e.opts.Logger.Warn("dropped " + m.Method + ": the subscriptions/listen stream is not reading")
			}
		}
		return sent
	}
	if send != nil {
		send(raw)
		return true
	}
	for _, send := range sinks {
		send(raw)
	}
	return len(sinks) > 0
}

// outletsLocked returns the session's outlets in the order they were
// attached; s.mu is held.
func (s *session) outletsLocked() []func([]byte) {
	sinks := make([]func([]byte), 0, len(s.sinks))
	keys := make([]int, 0, len(s.sinks))
	for k := range s.sinks {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		sinks = append(sinks, s.sinks[k])
	}
	return sinks
}

// toOutlets sends a server message that belongs to no request, as it is,
// to the session's outlets. It reports false when the session has none
// (a server without sessions, over HTTP, has no stream for it).
func (s *session) toOutlets(raw []byte) bool {
	s.mu.Lock()
	sinks := s.outletsLocked()
	s.mu.Unlock()
	for _, send := range sinks {
		send(raw)
	}
	return len(sinks) > 0
}

// withSubscriptionID sets params._meta["io.modelcontextprotocol/subscriptionId"].
func withSubscriptionID(raw []byte, id jsonrpc.ID) ([]byte, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, err
	}
	params := map[string]json.RawMessage{}
	if p := msg["params"]; len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(p, &params); err != nil {
			return nil, err
		}
	}
	meta := map[string]json.RawMessage{}
	if mm := params["_meta"]; len(mm) > 0 && string(mm) != "null" {
		if err := json.Unmarshal(mm, &meta); err != nil {
			return nil, err
		}
	}
	meta[mcp.MetaSubscriptionID] = json.RawMessage(id)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	return json.Marshal(msg)
}

// prepareListen moves the notifications recorded on subscriptions/listen
// streams (other than the acknowledgment) to where they happened: after
// the last client request recorded before them, as notifications that
// belong to no request.
func (e *Engine) prepareListen() {
	if len(e.byMethod["subscriptions/listen"]) == 0 {
		return
	}
	type timed struct {
		at  cassettes.Millis
		pos int
	}
	var reqs []timed
	var moved []struct {
		at  cassettes.Millis
		raw []byte
	}
	for i := range e.requests {
		r := &e.requests[i]
		if r.req.Method == "subscriptions/listen" {
			for _, x := range r.interaction.Exchange {
				if x.From != cassettes.FromServer || x.Message == nil {
					continue
				}
				if m, err := jsonrpc.Parse(x.Message); err == nil && m.Kind() == jsonrpc.KindNotification && mcp.SubscriptionNotification(m.Method) {
					moved = append(moved, struct {
						at  cassettes.Millis
						raw []byte
					}{x.AtMs, x.Message})
				}
			}
			continue
		}
		reqs = append(reqs, timed{r.interaction.AtMs, r.pos})
	}
	for _, mv := range moved {
		after := -1
		for _, r := range reqs {
			if r.at <= mv.at {
				after = r.pos
			}
		}
		e.followers[after] = append(e.followers[after], &followup{raw: mv.raw})
	}
}

// listen answers a subscriptions/listen request: the acknowledgment, then
// a stream that stays open and carries the notifications the client asked
// for, each with the live request's id as its subscription id, until the
// client cancels (stdio), closes the stream (HTTP), or the server ends it
// (then a "complete" response closes it gracefully).
func (s *session) listen(msg *jsonrpc.Message) *answerPlan {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	json.Unmarshal(msg.Params, &p)
	f := p.Notifications
	if s.e.caps.known {
		// Acknowledge only what the recorded server supports.
		f.ToolsListChanged = f.ToolsListChanged && s.e.caps.listChanged["tools"]
		f.PromptsListChanged = f.PromptsListChanged && s.e.caps.listChanged["prompts"]
		f.ResourcesListChanged = f.ResourcesListChanged && s.e.caps.listChanged["resources"]
		if !s.e.caps.subscribe {
			f.ResourceSubscriptions = nil
		}
	}
	l := &listener{id: msg.ID, filter: f, ch: make(chan []byte, 256), done: make(chan struct{})}
	s.mu.Lock()
	s.modern = true
	s.listeners[msg.ID] = l
	s.mu.Unlock()
	s.e.track(s, 1)
	ackParams, _ := json.Marshal(map[string]any{"notifications": f})
	ack, _ := withSubscriptionID(notification("notifications/subscriptions/acknowledged", ackParams), msg.ID)
	closing, _ := json.Marshal(map[string]any{"resultType": "complete", "_meta": map[string]json.RawMessage{mcp.MetaSubscriptionID: json.RawMessage(msg.ID)}})
	return &answerPlan{Steps: []step{
		{Kind: stepSend, Message: ack},
		{Kind: stepListen, replyID: msg.ID},
		{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, closing)},
	}}
}

// serveListen carries the notifications of the subscription id to emit
// until ctx ends (the client went away or cancelled: it returns false) or
// the server ends the subscription (true: the closing response follows).
func (s *session) serveListen(ctx context.Context, id jsonrpc.ID, emit func([]byte) error) bool {
	s.mu.Lock()
	l := s.listeners[id]
	s.mu.Unlock()
	if l == nil {
		return true
	}
	defer func() {
		s.mu.Lock()
		if s.listeners[id] == l {
			delete(s.listeners, id)
		}
		s.mu.Unlock()
		s.e.track(s, -1)
	}()
	for {
		select {
		case out := <-l.ch:
			s.e.logSend(out, 0, "")
			if emit(out) != nil {
				return false
			}
		case <-l.done:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// EndSubscriptions ends the session's subscriptions/listen streams
// gracefully: each gets its "complete" response.
func (s *session) endSubscriptions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.listeners {
		select {
		case <-l.done:
		default:
			close(l.done)
		}
		_ = id
	}
}
