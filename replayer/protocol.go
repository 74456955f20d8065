package replayer

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file holds what the engine knows of the recorded server as a
// protocol peer: the capabilities it declared, the protocol versions it
// spoke, and the "generation" of each recorded list answer (how many list
// changes of its kind the recording had seen before it), so that a list
// asked for after a list change answers the changed list.

// serverCaps are the recorded server's declared capabilities that replay
// depends on.
type serverCaps struct {
	known bool // an initialize or server/discover answer was recorded
	// listChanged by kind ("tools", "prompts", "resources").
	listChanged map[string]bool
	subscribe   bool // resources.subscribe
	logging     bool
	tasksList   bool // tasks.list
	// supported are the protocol versions the recording speaks (from
	// server/discover's supportedVersions, or the initialize answers).
	supported []string
	// inits are the recorded initialize requests' client capabilities, by
	// cassette position (protocol_caps.go).
	inits []recordedInit
	// asks says that the recording asks a client for input (a
	// server-to-client request that needs a client capability, an
	// input_required result, a -32042).
	asks bool
}

// prepareProtocol reads capabilities, versions and list generations off
// the recording. New calls it once the requests are indexed.
func (e *Engine) prepareProtocol() {
	c := e.cassette
	e.caps.listChanged = map[string]bool{}
	versions := map[string]bool{}
	// The handshakes, in recorded order, from the requests New parsed
	// rather than by looking through every interaction again.
	handshakes := slices.Concat(e.byMethod[mcp.MethodInitialize], e.byMethod[mcp.MethodDiscover])
	slices.Sort(handshakes)
	for _, n := range handshakes {
		rec := &e.requests[n]
		in := rec.interaction
		if in.Response == nil {
			continue
		}
		if rec.req.Method == mcp.MethodInitialize {
			e.caps.inits = append(e.caps.inits, recordedInit{index: rec.index, caps: initCapsOf(rec.req.Params)})
		}
		var resp struct {
			Result *struct {
				ProtocolVersion   string   `json:"protocolVersion"`
				SupportedVersions []string `json:"supportedVersions"`
				Capabilities      struct {
					Tools     *struct{ ListChanged bool } `json:"tools"`
					Prompts   *struct{ ListChanged bool } `json:"prompts"`
					Resources *struct {
						ListChanged bool `json:"listChanged"`
						Subscribe   bool `json:"subscribe"`
					} `json:"resources"`
					Logging json.RawMessage `json:"logging"`
					Tasks   *struct {
						List json.RawMessage `json:"list"`
					} `json:"tasks"`
				} `json:"capabilities"`
			} `json:"result"`
		}
		if json.Unmarshal(in.Response.Message, &resp) != nil || resp.Result == nil {
			continue
		}
		r := resp.Result
		e.caps.known = true
		if r.Capabilities.Tools != nil && r.Capabilities.Tools.ListChanged {
			e.caps.listChanged["tools"] = true
		}
		if r.Capabilities.Prompts != nil && r.Capabilities.Prompts.ListChanged {
			e.caps.listChanged["prompts"] = true
		}
		if rs := r.Capabilities.Resources; rs != nil {
			e.caps.listChanged["resources"] = e.caps.listChanged["resources"] || rs.ListChanged
			e.caps.subscribe = e.caps.subscribe || rs.Subscribe
		}
		if len(r.Capabilities.Logging) > 0 && string(r.Capabilities.Logging) != "null" {
			e.caps.logging = true
		}
		if t := r.Capabilities.Tasks; t != nil && len(t.List) > 0 && string(t.List) != "null" {
			e.caps.tasksList = true
		}
		for _, v := range r.SupportedVersions {
			versions[v] = true
		}
		if r.ProtocolVersion != "" {
			versions[r.ProtocolVersion] = true
		}
	}
	if e.discover != nil {
		// A server that answers server/discover lists what it speaks.
		for v := range versions {
			e.caps.supported = append(e.caps.supported, v)
		}
		slices.Sort(e.caps.supported)
	}

	// Generations: order the recorded list requests and list changes by
	// time (file order on ties, so hand-written cassettes with no times
	// keep their order).
	type event struct {
		at   cassettes.Millis
		seq  int
		kind string
		pos  int // request position, -1 for a list change
	}
	var events []event
	add := func(at cassettes.Millis, kind string, pos int) {
		events = append(events, event{at, len(events), kind, pos})
	}
	pos := 0
	for i := range c.Interactions {
		in := &c.Interactions[i]
		switch {
		case in.Scripted():
		case in.From == cassettes.FromClient && in.Request != nil:
			if r := &e.requests[pos]; r.index == i {
				if k := mcp.ListKind(r.req.Method); k != "" {
					add(in.AtMs, k, pos)
				}
			}
			pos++
		case in.From == cassettes.FromServer && in.Notification != nil:
			if m, err := jsonrpc.Parse(in.Notification); err == nil && mcp.ListChanged(m.Method) {
				add(in.AtMs, mcp.ListKind(m.Method), -1)
			}
		}
		for _, x := range in.Exchange {
			if x.From != cassettes.FromServer || x.Message == nil {
				continue
			}
			if m, err := jsonrpc.Parse(x.Message); err == nil && m.Kind() == jsonrpc.KindNotification && mcp.ListChanged(m.Method) {
				add(x.AtMs, mcp.ListKind(m.Method), -1)
			}
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	e.gen = map[int]int{}
	count := map[string]int{}
	for _, ev := range events {
		if ev.pos < 0 {
			count[ev.kind]++
		} else {
			e.gen[ev.pos] = count[ev.kind]
		}
	}
	for i := range c.Interactions {
		if asksClient(&c.Interactions[i]) {
			e.caps.asks = true
			break
		}
	}
	e.prepareListen()
	e.prepareLists()
	rm, err := matcher.WithConfig(e.index.base, e.index.cassette)
	if err != nil {
		rm = e.index.base
	}
	e.replyMatcher = rm
}

// plainOK reports whether live may be answered from a plain key list
// without narrow: not a list request (narrowed to its generation), and not
// a request of a client whose declared capabilities can choose among the
// recorded answers (preferFitting) of a recording that asks clients for
// input.
func (s *session) plainOK(live matcher.Request) bool {
	if mcp.ListKind(live.Method) != "" {
		return false
	}
	if !s.e.caps.asks {
		return true
	}
	_, _, declared := s.clientCapsFor(live.Params)
	return !declared
}

// narrow keeps, of the recorded requests that match live (positions into
// Engine.requests, best first), those that belong where the session is:
// for a list, the recorded answers of the session's list generation; for a
// retry of a multi round-trip request (2026-07-28), the recorded retry that
// carries the same requestState. When none does, it keeps them all.
func (s *session) narrow(live matcher.Request, matches []int) []int {
	if len(matches) < 2 {
		return matches
	}
	return s.preferFitting(live, s.narrowState(live, matches)) // protocol_caps.go
}

// narrowState is narrow by the list generation or requestState.
func (s *session) narrowState(live matcher.Request, matches []int) []int {
	e := s.e
	if k := mcp.ListKind(live.Method); k != "" {
		s.mu.Lock()
		have := s.gens[k]
		s.mu.Unlock()
		best, found := -1, false
		for _, n := range matches {
			if g := e.gen[n]; g <= have && g > best {
				best, found = g, true
			}
		}
		if !found {
			return matches
		}
		return slices.DeleteFunc(slices.Clone(matches), func(n int) bool { return e.gen[n] != best })
	}
	state, retry := s.paramsOf(live.Params).Retry()
	var same, kind []int
	for _, n := range matches {
		if e.requests[n].mrtrRetry == retry {
			kind = append(kind, n)
			if retry {
				if rs, _ := mcp.RequestState(e.requests[n].req.Params); rs == state {
					same = append(same, n)
				}
			}
		}
	}
	switch {
	case len(same) > 0:
		return same
	case len(kind) > 0:
		return kind
	}
	return matches
}

// checkVersion answers a request whose per-request _meta names a protocol
// version the recorded server does not speak with -32022, as the server
// would: its data lists the supported versions. v is the version msg's
// _meta names.
func (s *session) checkVersion(msg *jsonrpc.Message, v string) *answerPlan {
	if v == "" || len(s.e.caps.supported) == 0 || slices.Contains(s.e.caps.supported, v) {
		return nil
	}
	data, _ := json.Marshal(unsupportedVersion{Supported: s.e.caps.supported, Requested: v})
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
		Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version: " + v, Data: data})}}}
}

// protocolPlan answers what the protocol itself decides before any
// matching: a protocol version the recording does not speak (-32022),
// subscriptions/listen, and logging/setLevel when the cassette lacks it.
// version is the protocol version msg's _meta names.
func (s *session) protocolPlan(msg *jsonrpc.Message, version string) *answerPlan {
	if mcp.Stateless(version) {
		s.mu.Lock()
		s.modern = true
		s.mu.Unlock()
	}
	if plan := s.checkVersion(msg, version); plan != nil {
		s.e.stats.unmatched.Add(1)
		return plan
	}
	if plan := s.badLogLevel(msg, version); plan != nil { // logging.go
		s.e.stats.unmatched.Add(1)
		return plan
	}
	switch msg.Method {
	case "subscriptions/listen":
		s.e.stats.matched.Add(1)
		plan := s.listen(msg)
		if r, _ := s.choose(matcher.Request{Method: msg.Method, Params: msg.Params}); r != nil {
			s.e.markUsed(r)
			plan.Interaction = r.index + 1
		}
		return plan
	case "logging/setLevel":
		return s.setLevel(msg)
	}
	return nil
}

// badCursor turns a miss of a list request with a cursor into the -32602
// a server answers to an unknown cursor.
func (s *session) badCursor(msg *jsonrpc.Message, plan *answerPlan) *answerPlan {
	if _, isList := mcp.ListOf(msg.Method); plan.Miss == nil || !isList {
		return plan
	}
	c := mcp.Cursor(msg.Params)
	if c == "" {
		return plan
	}
	out := invalidCursor(msg, "unknown cursor "+string(mustJSON(c)))
	out.Miss = plan.Miss
	return out
}

// withNotify appends a fault's scripted notifications after the answer.
func (s *session) withNotify(plan *answerPlan, f *cassettes.Fault) *answerPlan {
	for _, m := range f.Notify {
		plan.Steps = append(plan.Steps, step{Kind: stepSend, Notify: true, Message: notification(m, nil)})
	}
	return plan
}
