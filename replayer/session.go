package replayer

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// Session is one client's replay state: which recorded interactions it has
// used, the server-to-client requests it awaits replies to. Its methods are
// safe for concurrent use.
type session struct {
	e *Engine

	mu        sync.Mutex                      // guards the fields below
	used      counts                          // recorded request position → times answered
	cursors   counts                          // a key list's id → its first request not used up (match.go)
	fired     map[int]bool                    // followers already sent
	nextID    int64                           // for server-to-client requests
	awaiting  map[jsonrpc.ID]chan struct{}    // server-to-client requests awaiting a reply
	replied   map[jsonrpc.ID]*jsonrpc.Message // replies received
	firstDone bool
	effects   effects // what client notifications caused (cause.go)
	// capsMemo is the client capabilities last decoded from a request's
	// _meta, and capsMemoRaw their JSON (clientCapsMemo).
	capsMemo    map[string]json.RawMessage
	capsMemoRaw []byte
	// params is what was read of the last request params (paramsOf), with
	// a lock of its own.
	params paramsMemo

	script scriptState // counters of scripted interactions (faults.go)
	tasks  taskMap     // live and recorded task ids (tasks.go)

	gens      map[string]int             // list changes seen, by kind (protocol.go)
	listing   map[string]int             // method → listing being paged (pages.go)
	level     int                        // logging level (logging.go)
	modern    bool                       // a 2026-07-28 client (notify.go)
	sinks     map[int]func([]byte)       // outlets (notify.go)
	nextSink  int                        // for sinks keys
	listeners map[jsonrpc.ID]*listener   // open subscriptions/listen requests
	initCaps  map[string]json.RawMessage // the capabilities of the client's initialize (protocol_caps.go)
	elicits   map[string]string          // recorded elicitationId → live (protocol_elicit.go)
	// elicitReqs maps the live id of a URL-mode elicitation/create to its
	// live elicitationId; declined holds the live elicitationIds the
	// client refused where the recording accepted (protocol_elicit.go).
	elicitReqs map[jsonrpc.ID]string
	declined   map[string]bool
	// chains holds, by the requestState token the replay handed out in
	// its place, what a 2026-07-28 input_required result handed out;
	// chainOrder is their order, oldest first (protocol_elicit.go).
	chains     map[string]*mrtrChain
	chainOrder []string

	// noSession marks the state shared by the requests to the replay of a
	// server that kept no sessions (protocol_sessionless.go): set before
	// the Session is shared, it keeps no logging level, as each request
	// of such a server has its own.
	noSession bool
	// version is the protocol version the session's initialize answer
	// negotiated, "" before it (protocol_batch.go).
	version string
}

// NewSession starts a session with fresh replay state.
func (e *Engine) newSession() *session {
	n := uint64(e.sessions.Add(1))
	return &session{e: e, fired: map[int]bool{}, awaiting: map[jsonrpc.ID]chan struct{}{}, replied: map[jsonrpc.ID]*jsonrpc.Message{},
		script: scriptState{counts: map[int]int{}, recent: map[int][]time.Time{}, rng: rand.New(rand.NewPCG(e.opts.Seed, n))},
		gens:   map[string]int{}, listing: map[string]int{}, sinks: map[int]func([]byte){}, listeners: map[jsonrpc.ID]*listener{}}
}

// Handle returns the plan that answers one client request or notification.
// For a client's response (a reply to a server-to-client request), use
// Deliver instead.
func (s *session) plan(msg *jsonrpc.Message) *answerPlan {
	return s.handleContext(context.Background(), msg)
}

// planFor is Handle without the explanation of a miss: a plan with a Miss
// still to explain (Miss.pending) is completed by settle (explain.go),
// which also calls OnMiss and OnRequest for it.
func (s *session) planFor(msg *jsonrpc.Message) *answerPlan {
	s.e.stats.messages.Add(1)
	if msg.Kind() != jsonrpc.KindRequest {
		if msg.Kind() == jsonrpc.KindNotification {
			s.caused(msg) // cause.go
		}
		return &answerPlan{}
	}
	s.noteInitialize(msg)          // protocol_caps.go
	lmsg, known := s.taskIn(msg)   // tasks.go
	lmsg, chain := s.stateIn(lmsg) // protocol_elicit.go
	// The protocol version a 2026-07-28 request names in its _meta, read
	// once: several checks of the request ask for it.
	version := s.paramsOf(lmsg.Params).ProtocolVersion()
	var plan *answerPlan
	if !s.unknownTask(msg, known) {
		plan = s.perRequestLogs(msg, version, s.checkClientCaps(msg, s.handle(lmsg, version)))
	}
	plan = s.elicitOut(msg, s.taskOut(msg, plan, known), chain) // protocol_elicit.go
	s.noteVersion(msg, plan)                                    // protocol_batch.go
	if !plan.pending() {
		s.onRequest(msg, plan)
	}
	return plan
}

// onRequest calls Options.OnRequest for a handled request.
func (s *session) onRequest(msg *jsonrpc.Message, plan *answerPlan) {
	if f := s.e.opts.OnRequest; f != nil {
		ev := Event{Method: msg.Method, Params: msg.Params, Interaction: plan.Interaction, Miss: plan.Miss}
		if msg.Method == "tools/call" {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if json.Unmarshal(msg.Params, &p) == nil {
				ev.Tool, ev.Arguments = p.Name, p.Arguments
			}
		}
		f(ev)
	}
}

// handle plans the answer to the request msg, whose _meta names version.
func (s *session) handle(msg *jsonrpc.Message, version string) *answerPlan {
	live := matcher.Request{Method: msg.Method, Params: msg.Params}
	if plan := s.protocolPlan(msg, version); plan != nil {
		return plan
	}
	if plan := s.validateArgs(msg, live); plan != nil {
		return plan
	}
	sc := s.trigger(live)
	if sc == nil {
		plan := s.repage(msg, live)
		if plan == nil {
			plan = s.recordedPlan(msg, live)
		}
		if lat := s.e.opts.Latency; plan.Miss == nil && (lat.Factor > 0 || lat.Fixed > 0) {
			recorded := s.recordedLatency(plan.Interaction)
			if plan.paced {
				recorded = 0 // the factor already spaced the exchange
			}
			if d := lat.delay(recorded); d > 0 {
				plan.Steps = append([]step{{Kind: stepDelay, Delay: d}}, plan.Steps...)
			}
		}
		return s.badCursor(msg, plan)
	}
	// A scripted interaction answers: counted as scripted, not as matched,
	// also when it changes the recorded answer (its fault on the recording).
	plan, latency := s.answerScripted(msg, sc, func() *answerPlan { return s.recordedPlanCounted(msg, live, false) })
	if plan.Miss == nil {
		s.e.stats.scripted.Add(1)
	}
	plan.Scripted = sc.source
	if f := sc.in.Fault; f != nil {
		plan = s.applyFault(plan, f, latency, msg.ID)
		plan.Scripted = sc.source
		plan = s.withNotify(plan, f)
	}
	return plan
}

// recordedPlan answers from the recording.
func (s *session) recordedPlan(msg *jsonrpc.Message, live matcher.Request) *answerPlan {
	return s.recordedPlanCounted(msg, live, true)
}

// recordedPlanCounted is recordedPlan; a recorded answer counts as matched
// only when count is set (not when a scripted fault changes it).
func (s *session) recordedPlanCounted(msg *jsonrpc.Message, live matcher.Request, count bool) *answerPlan {
	r, miss := s.choose(live)
	if r == nil {
		if plan := s.synthesize(msg); plan != nil {
			if count {
				s.e.stats.matched.Add(1)
			}
			return plan
		}
		if plan := s.forward(msg, live); plan != nil { // new-episodes (episodes.go)
			return plan
		}
		s.e.stats.unmatched.Add(1)
		// The answer says what settle will explain (explain.go); until
		// then it names the method and tool only.
		miss.id = jsonrpc.ID(strings.Clone(string(msg.ID))) // its own: msg's may be a view of a long line
		return &answerPlan{Miss: miss, Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, miss.rpcError()), missAnswer: true}}}
	}
	if count {
		s.e.stats.matched.Add(1)
	}
	s.e.markUsed(r)
	return s.answer(msg, r)
}

// answer builds the plan of a matched request: the recorded exchange with
// live ids and tokens, the response under the live id, and the server
// messages recorded after the request that belong to no request: before
// the response those recorded before it, the others after it.
func (s *session) answer(msg *jsonrpc.Message, r *recorded) *answerPlan {
	before, after := s.followUps(r)
	var plan *answerPlan
	if r.lone {
		// The response alone: what answerWith does for an interaction
		// without an exchange, from the copies in r.
		plan = newPlan(r.index + 1)
		for _, b := range before {
			plan.Steps = append(plan.Steps, b.steps...)
		}
		plan.addResponseAt(msg.ID, r.response, int(r.idAt), int(r.idEnd), r.idAt >= 0, int(r.responseBatch))
	} else {
		plan = s.answerWith(msg, r.interaction, r.index+1, before)
	}
	plan.rec = r
	plan.Steps = append(plan.Steps, after...)
	return plan
}

// early is the steps of a server message of its own that came before a
// response, after n of its request's exchange messages.
type early struct {
	n     int
	steps []step
}

// answerWith builds the answer of one interaction (at cassette position
// pos, 0 for one from elsewhere): its exchange with live ids and tokens,
// with the server messages of their own that came before the response
// (before, in order) in their places, then its response under the live id.
func (s *session) answerWith(msg *jsonrpc.Message, in *cassettes.Interaction, pos int, before []early) *answerPlan {
	plan := newPlan(pos)
	token := mcp.ProgressToken(msg.Params)
	// With a latency factor, the exchange keeps its recorded pacing
	// (scaled): each message waits for its recorded offset.
	factor := s.e.opts.Latency.Factor
	last := in.AtMs
	pace := func(at cassettes.Millis) {
		if factor <= 0 || len(in.Exchange) == 0 {
			return
		}
		if d := time.Duration(float64(at-last) * factor * float64(time.Millisecond)); d > 0 {
			plan.Steps = append(plan.Steps, step{Kind: stepDelay, Delay: d})
		}
		if at > last {
			last = at
		}
		plan.paced = true
	}
	for i, m := range in.Exchange {
		for len(before) > 0 && before[0].n <= i {
			plan.Steps = append(plan.Steps, before[0].steps...)
			before = before[1:]
		}
		if m.From != cassettes.FromServer {
			continue // the client's replies: the live client sends its own
		}
		if m.Raw != nil {
			if s.e.skipsRaw(in, *m.Raw) {
				continue
			}
			pace(m.AtMs)
			plan.Steps = append(plan.Steps, step{Kind: stepSend, Message: []byte(*m.Raw), Batch: m.Batch})
			continue
		}
		sm, err := jsonrpc.Parse(m.Message)
		if err != nil {
			continue
		}
		switch sm.Kind() {
		case jsonrpc.KindNotification:
			out := []byte(m.Message)
			if sm.Method == "notifications/progress" {
				if token == nil {
					continue // the live client asked for no progress
				}
				if out, err = jsonrpc.SetMember(out, token, "params", "progressToken"); err != nil {
					continue
				}
			}
			if !s.keepLog(sm) {
				continue
			}
			pace(m.AtMs)
			plan.Steps = append(plan.Steps, step{Kind: stepSend, Message: out, Notify: mcp.SubscriptionNotification(sm.Method), Batch: m.Batch})
		case jsonrpc.KindRequest:
			pace(m.AtMs)
			id := s.freshID()
			out, err := jsonrpc.WithID(m.Message, id)
			if err != nil {
				continue
			}
			await := step{Kind: stepAwaitReply, replyID: id, method: sm.Method, origID: msg.ID}
			for _, r := range in.Exchange[i+1:] {
				if r.From != cassettes.FromClient || r.Message == nil {
					continue
				}
				if rm, err := jsonrpc.Parse(r.Message); err == nil && rm.Kind() == jsonrpc.KindResponse && rm.ID == sm.ID {
					await.expect = r.Message
					break
				}
			}
			plan.Steps = append(plan.Steps, step{Kind: stepSend, Message: out, Batch: m.Batch}, await)
		}
	}
	for _, b := range before {
		plan.Steps = append(plan.Steps, b.steps...)
	}
	if in.Response != nil && in.Response.Message != nil {
		pace(in.Response.AtMs)
		plan.addResponse(msg.ID, in.Response.Message, in.Response.Batch)
	} else {
		plan.Steps = append(plan.Steps, step{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
			Code:    jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("mcpmock: the recorded %s (interaction %d) got no response from the server", msg.Method, pos),
		})})
	}
	return plan
}

// followUps returns, once per session, the steps of the server-initiated
// messages recorded after r (and, with the first answer, those before any
// request): before, those that came before the response (marked so, or
// recorded at an offset before the response's), each with its place among
// the exchange, in order; after, the others.
func (s *session) followUps(r *recorded) (before []early, after []step) {
	pos := r.pos
	var room [2]int
	keys := room[:0]
	s.mu.Lock()
	if !s.firstDone {
		s.firstDone = true
		keys = append(keys, -1)
	}
	keys = append(keys, pos)
	var fire [][]*followup
	for _, k := range keys {
		if s.fired[k] || len(s.e.followers[k]) == 0 {
			continue
		}
		s.fired[k] = true
		fire = append(fire, s.e.followers[k])
	}
	s.mu.Unlock()
	for _, fs := range fire {
		for _, f := range fs {
			n, ok := f.place(r)
			if !ok {
				after = s.followSteps(after, f)
				continue
			}
			// On the request's stream, as the recorded server sent
			// it, unless it came on the GET stream.
			steps := s.followSteps(nil, f)
			for i := range steps {
				if !f.get {
					steps[i].unsolicited, steps[i].inline = false, steps[i].Notify
				}
			}
			before = append(before, early{n: n, steps: steps})
		}
	}
	slices.SortStableFunc(before, func(a, b early) int { return a.n - b.n })
	return before, after
}

// place says whether f, a server message of its own recorded after r,
// came before r's response, and after how many of its exchange messages.
func (f *followup) place(r *recorded) (n int, before bool) {
	switch {
	case f.before:
		return f.afterExchange, true
	case f.at > 0 && f.at < r.respondedAt():
		for _, m := range r.interaction.Exchange {
			if m.AtMs <= f.at {
				n++
			}
		}
		return n, true
	}
	return 0, false
}

// followSteps appends to steps the steps that send f, a server message that
// belongs to no request: a server-to-client request under a fresh id, then
// the wait for its reply, which is checked (cause.go); a notification
// unless the client's logging level filters it out.
func (s *session) followSteps(steps []step, f *followup) []step {
	if f.request {
		msg, await, ok := s.followRequest(f)
		if !ok {
			return steps
		}
		return append(steps, step{Kind: stepSend, Message: msg, Batch: f.batch, unsolicited: true, get: f.get}, await)
	}
	notify := false
	if m, err := jsonrpc.Parse(f.raw); err == nil && m.Kind() == jsonrpc.KindNotification {
		if !s.keepLog(m) {
			return steps
		}
		notify = mcp.SubscriptionNotification(m.Method)
	}
	return append(steps, step{Kind: stepSend, Message: f.raw, Notify: notify, Batch: f.batch, unsolicited: true, get: f.get})
}

func (s *session) freshID() jsonrpc.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := jsonrpc.IntID(s.nextID)
	s.awaiting[id] = make(chan struct{})
	return id
}

// Deliver hands the session a response from the client (a reply to a
// server-to-client request). It reports whether a request awaited it.
func (s *session) deliver(msg *jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.awaiting[msg.ID]
	if !ok {
		return false
	}
	delete(s.awaiting, msg.ID)
	s.replied[msg.ID] = msg
	close(ch)
	return true
}

// AwaitReply waits for the client's reply to the server-to-client request
// id, until ctx ends or the engine's reply timeout passes.
func (s *session) awaitReply(ctx context.Context, id jsonrpc.ID) (*jsonrpc.Message, error) {
	s.mu.Lock()
	ch, ok := s.awaiting[id]
	reply := s.replied[id]
	s.mu.Unlock()
	if !ok {
		return reply, nil
	}
	t := time.NewTimer(s.e.opts.ReplyTimeout)
	defer t.Stop()
	select {
	case <-ch:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.replied[id], nil
	case <-t.C:
		return nil, fmt.Errorf("replayer: no reply from the client to request %s within %v", id, s.e.opts.ReplyTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// synthesize answers what a real server answers although the cassette does
// not hold it: ping, logging/setLevel at a level not recorded, tasks/list,
// and initialize from a recorded server/discover.
func (s *session) synthesize(msg *jsonrpc.Message) *answerPlan {
	switch {
	case msg.Method == "tasks/list" && len(s.e.byMethod["tasks/list"]) == 0:
		return s.synthesizeTaskList(msg)
	case msg.Method == "logging/setLevel" && s.e.caps.logging:
		// Recorded at another level: a server that declared logging
		// takes any (setLevel checked the level).
		return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, json.RawMessage("{}"))}}}
	case msg.Method == "ping" && len(s.e.byMethod["ping"]) == 0:
		return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, json.RawMessage("{}"))}}}
	case msg.Method == "initialize" && len(s.e.byMethod["initialize"]) == 0 && s.e.discover != nil:
		result, err := initializeFromDiscover(s.e.discover.interaction.Response.Message, msg.Params)
		if err != nil {
			return nil
		}
		s.e.markUsed(s.e.discover)
		return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.Response(msg.ID, result)}}}
	}
	return nil
}

// initializeFromDiscover builds the InitializeResult that the server of a
// recorded server/discover gives a client of the stateful era.
func initializeFromDiscover(response json.RawMessage, params json.RawMessage) (json.RawMessage, error) {
	var resp struct {
		Result struct {
			SupportedVersions []string                   `json:"supportedVersions"`
			Capabilities      json.RawMessage            `json:"capabilities"`
			Instructions      string                     `json:"instructions"`
			Meta              map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal(response, &resp); err != nil {
		return nil, err
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(params, &p)
	version := ""
	for _, v := range resp.Result.SupportedVersions {
		if v == p.ProtocolVersion {
			version = v
			break
		}
		if !mcp.Stateless(v) && v > version {
			version = v
		}
	}
	if version == "" {
		version = mcp.LatestStateful
	}
	out := map[string]any{"protocolVersion": version, "capabilities": resp.Result.Capabilities}
	if resp.Result.Capabilities == nil {
		out["capabilities"] = map[string]any{}
	}
	if info, ok := resp.Result.Meta[mcp.MetaServerInfo]; ok {
		out["serverInfo"] = info
	} else {
		out["serverInfo"] = map[string]string{"name": "mcpmock-replay", "version": "0"}
	}
	if resp.Result.Instructions != "" {
		out["instructions"] = resp.Result.Instructions
	}
	return json.Marshal(out)
}
