package replayer

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// markElicitationID finds the "elicitationId" of a message quickly (jsonrpc.Marker).
var markElicitationID = jsonrpc.NewMarker(`"elicitationId"`)

// This file gives URL-mode elicitation (2025-11-25) its semantics in
// replay. An elicitationId that the client chose (the recorded id is a
// string of the recorded request's params, as an elicitationId argument
// of a tool) becomes the one the live client chose at the same place; one
// the server made up becomes a fresh one. Either way the live id replaces
// the recorded one everywhere in the replayed messages of the session:
// in elicitation/create and its url, in each elicitation of a replayed
// -32042 (URLElicitationRequiredError), in the
// notifications/elicitation/complete that names it, and in any string a
// later message carries, a tool's text and structured content included
// (recordedIDs). A completion of an elicitation the session was never sent
// is not sent, nor one of an elicitation the live client declined or
// cancelled (or answered with an error) where the recorded client
// accepted: the recorded server completed it because it was accepted.
// In 2026-07-28 (which removed elicitationId, the completion and -32042)
// a URL-mode elicitation inside an input_required result that still
// carries an elicitationId gets a fresh one too, and the completion that
// the client's retry brings names it (freshInputRequests, stateIn).

// CodeURLElicitationRequired is the JSON-RPC error code of a request that
// cannot be processed until URL-mode elicitations complete (2025-11-25).
const CodeURLElicitationRequired = -32042

const methodElicitationComplete = "notifications/elicitation/complete"

// elicitOut maps the elicitation ids of a plan's messages to live ones.
// live is the request the plan answers, whose params hold the ids the
// client chose; chain is what stateIn found for it (nil when it is no
// retry of one made here): its completions name its ids.
func (s *session) elicitOut(live *jsonrpc.Message, plan *answerPlan, chain *mrtrChain) *answerPlan {
	if plan == nil {
		return plan
	}
	s.mu.Lock()
	seen := len(s.elicits) > 0
	s.mu.Unlock()
	if !seen && !slices.ContainsFunc(plan.Steps, func(st step) bool {
		return st.Kind == stepSend && markElicitationID.In(st.Message)
	}) {
		return plan
	}
	chosen := s.chosenIDs(plan, live.Params)
	out := *plan
	out.Steps = nil
	for _, st := range plan.Steps {
		if st.Kind == stepSend && markElicitationID.In(st.Message) {
			msg, completes, drop := s.relicit(st.Message, chain, chosen)
			if drop != "" {
				s.e.opts.Logger.Warn("not sent " + methodElicitationComplete + ": " + drop)
				continue
			}
			st.Message, st.completes = msg, completes
		}
		out.Steps = append(out.Steps, st)
	}
	// Now that the plan's elicitations have their live ids, each message
	// names them wherever it names the recorded ones.
	s.mu.Lock()
	ids := maps.Clone(s.elicits)
	s.mu.Unlock()
	for i, st := range out.Steps {
		if st.Kind == stepSend {
			out.Steps[i].Message = recordedIDs(st.Message, ids)
		}
	}
	return &out
}

// chosenIDs returns the elicitationIds the client chose for the request
// plan answers: each recorded string of the recorded request's params
// that a URL-mode elicitation of the plan uses as its id, mapped to the
// string of the live params at the same place.
func (s *session) chosenIDs(plan *answerPlan, live json.RawMessage) map[string]string {
	if live == nil || plan.Interaction < 1 || plan.Interaction > len(s.e.cassette.Interactions) {
		return nil
	}
	rec, err := jsonrpc.Parse(s.e.cassette.Interactions[plan.Interaction-1].Request)
	if err != nil || len(rec.Params) == 0 {
		return nil
	}
	var recParams, liveParams any
	if json.Unmarshal(rec.Params, &recParams) != nil || json.Unmarshal(live, &liveParams) != nil {
		return nil
	}
	var chosen map[string]string
	for _, st := range plan.Steps {
		if st.Kind != stepSend || !bytes.Contains(st.Message, []byte(`"elicitationId"`)) {
			continue
		}
		for _, id := range urlElicitationIDs(st.Message) {
			path, ok := pathTo(recParams, id)
			if !ok {
				continue // the server's own
			}
			if live, ok := valueAt(liveParams, path).(string); ok && live != "" {
				if chosen == nil {
					chosen = map[string]string{}
				}
				chosen[id] = live
			}
		}
	}
	return chosen
}

// urlElicitationIDs returns the elicitationIds of the URL-mode
// elicitations a recorded message hands out: an elicitation/create's, and
// those of a -32042 error or an input_required result.
func urlElicitationIDs(raw []byte) []string {
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return nil
	}
	var els []json.RawMessage
	switch {
	case m.Method == "elicitation/create" && m.Kind() == jsonrpc.KindRequest:
		els = []json.RawMessage{m.Params}
	case m.Kind() == jsonrpc.KindResponse && m.Error != nil && m.Error.Code == CodeURLElicitationRequired:
		var data struct {
			Elicitations []json.RawMessage `json:"elicitations"`
		}
		json.Unmarshal(m.Error.Data, &data)
		els = data.Elicitations
	case m.Kind() == jsonrpc.KindResponse && m.Result != nil:
		var r struct {
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
		}
		json.Unmarshal(m.Result, &r)
		for _, k := range slices.Sorted(maps.Keys(r.InputRequests)) {
			if r.InputRequests[k].Method == "elicitation/create" {
				els = append(els, r.InputRequests[k].Params)
			}
		}
	}
	var ids []string
	for _, el := range els {
		if mode, _ := stringAt(el, "mode"); mode != "url" {
			continue
		}
		if id, ok := stringAt(el, "elicitationId"); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// pathTo returns the path (object keys and array indexes) of the first
// string of v equal to want, in document order of keys sorted.
func pathTo(v any, want string) ([]any, bool) {
	switch v := v.(type) {
	case string:
		return nil, v == want
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if p, ok := pathTo(v[k], want); ok {
				return append([]any{k}, p...), true
			}
		}
	case []any:
		for i, e := range v {
			if p, ok := pathTo(e, want); ok {
				return append([]any{i}, p...), true
			}
		}
	}
	return nil, false
}

// valueAt returns the value of v at path, nil when there is none.
func valueAt(v any, path []any) any {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			o, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = o[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// minInTextID is the length below which a recorded elicitationId is
// replaced only where it is a whole string: a shorter one ("1", "auth")
// could be part of unrelated text.
const minInTextID = 8

// recordedIDs returns raw with each recorded elicitationId of ids (recorded
// → live) replaced by its live one in every string value: a whole string,
// and inside text for an id of at least minInTextID bytes. Member names
// stay as recorded. raw is returned as it is when it names none of them.
func recordedIDs(raw []byte, ids map[string]string) []byte {
	var found bool
	for rec, live := range ids {
		if rec != live && bytes.Contains(raw, []byte(rec)) {
			found = true
			break
		}
	}
	if !found {
		return raw
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			for rec, live := range ids {
				if v == rec {
					changed = true
					return live
				}
			}
			out := v
			for rec, live := range ids {
				// A live id that contains the recorded one would be
				// replaced again inside itself.
				if len(rec) >= minInTextID && !strings.Contains(live, rec) && strings.Contains(out, rec) {
					out = strings.ReplaceAll(out, rec, live)
				}
			}
			changed = changed || out != v
			return out
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// relicit rewrites one message. For a completion it returns the live
// elicitationId it completes, or why it is not sent (drop).
func (s *session) relicit(raw []byte, chain *mrtrChain, chosen map[string]string) (out []byte, completes, drop string) {
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return raw, "", ""
	}
	switch {
	case m.Method == "elicitation/create" && m.Kind() == jsonrpc.KindRequest:
		if mode, _ := stringAt(m.Params, "mode"); mode != "url" {
			return raw, "", ""
		}
		p, err := s.freshElicitation(m.Params, chosen)
		if err != nil {
			return raw, "", ""
		}
		if out, err = jsonrpc.SetMember(raw, p, "params"); err != nil {
			return raw, "", ""
		}
		if live, ok := stringAt(p, "elicitationId"); ok {
			s.mu.Lock()
			if s.elicitReqs == nil {
				s.elicitReqs = map[jsonrpc.ID]string{}
			}
			s.elicitReqs[m.ID] = live
			s.mu.Unlock()
		}
		return out, "", ""
	case m.Method == methodElicitationComplete:
		rec, ok := stringAt(m.Params, "elicitationId")
		if !ok {
			return raw, "", ""
		}
		s.mu.Lock()
		live, known := s.elicits[rec]
		if chain != nil {
			if l, ok := chain.ids[rec]; ok {
				live, known = l, true
			}
		}
		s.mu.Unlock()
		if !known {
			return raw, "", "it completes an elicitation this session was not sent"
		}
		if out, err = jsonrpc.SetMember(raw, mustJSON(live), "params", "elicitationId"); err != nil {
			return raw, "", ""
		}
		return out, live, ""
	case m.Kind() == jsonrpc.KindResponse && m.Result != nil:
		return s.freshInputRequests(raw, m.Result, chosen), "", ""
	case m.Kind() == jsonrpc.KindResponse && m.Error != nil && m.Error.Code == CodeURLElicitationRequired:
		var data struct {
			Elicitations []json.RawMessage `json:"elicitations"`
		}
		if json.Unmarshal(m.Error.Data, &data) != nil || len(data.Elicitations) == 0 {
			return raw, "", ""
		}
		for i, el := range data.Elicitations {
			if p, err := s.freshElicitation(el, chosen); err == nil {
				data.Elicitations[i] = p
			}
		}
		d, _ := json.Marshal(data.Elicitations)
		if out, err = jsonrpc.SetMember(raw, d, "error", "data", "elicitations"); err != nil {
			return raw, "", ""
		}
		return out, "", ""
	}
	return raw, "", ""
}

// noteElicitReply notes a URL-mode elicitation that the live client
// declined, cancelled or answered with an error where the recorded client
// accepted it: its recorded completion is then not sent (withdrawn).
func (s *session) noteElicitReply(st step, reply *jsonrpc.Message) {
	if st.method != "elicitation/create" || reply == nil || st.expect == nil {
		return
	}
	s.mu.Lock()
	live, ok := s.elicitReqs[st.replyID]
	s.mu.Unlock()
	if !ok {
		return
	}
	rec, err := jsonrpc.Parse(st.expect)
	if err != nil || rec.Result == nil {
		return
	}
	if a, _ := stringAt(rec.Result, "action"); a != "accept" {
		return // the recording shows what the server does after a refusal
	}
	if a, _ := stringAt(reply.Result, "action"); reply.Error == nil && a == "accept" {
		return
	}
	s.mu.Lock()
	if s.declined == nil {
		s.declined = map[string]bool{}
	}
	s.declined[live] = true
	s.mu.Unlock()
}

// withdrawn reports whether a planned step is the completion of an
// elicitation the client has since declined (noteElicitReply): front ends
// do not send it.
func (s *session) withdrawn(st step) bool {
	if st.completes == "" {
		return false
	}
	s.mu.Lock()
	declined := s.declined[st.completes]
	s.mu.Unlock()
	if declined {
		s.e.opts.Logger.Warn("not sent " + methodElicitationComplete + ": the client declined the elicitation it completes, which the recorded client accepted")
	}
	return declined
}

// freshElicitation gives the URL-mode elicitation params p their live
// elicitationId (also in its url) and remembers it: the one the client
// chose (chosen, recorded → live), else a new one.
func (s *session) freshElicitation(p json.RawMessage, chosen map[string]string) (json.RawMessage, error) {
	rec, ok := stringAt(p, "elicitationId")
	if !ok || rec == "" {
		return p, nil
	}
	live, ok := chosen[rec]
	if !ok {
		live = newTaskID()
	}
	out, err := jsonrpc.SetMember(p, mustJSON(live), "elicitationId")
	if err != nil {
		return nil, err
	}
	if u, ok := stringAt(out, "url"); ok && strings.Contains(u, rec) {
		if o, err := jsonrpc.SetMember(out, mustJSON(strings.ReplaceAll(u, rec, live)), "url"); err == nil {
			out = o
		}
	}
	s.mu.Lock()
	if s.elicits == nil {
		s.elicits = map[string]string{}
	}
	s.elicits[rec] = live
	s.mu.Unlock()
	return out, nil
}

// freshInputRequests gives each URL-mode elicitation among the
// inputRequests of an input_required result (2026-07-28) a fresh
// elicitationId, as freshElicitation. 2026-07-28 removed the field (and
// notifications/elicitation/complete), but a server may still send them:
// the go-sdk sends what it is given. The keys of inputRequests, which the
// client's retry names in inputResponses, stay as recorded. The
// requestState the client echoes is opaque to it: the replay hands a token
// of its own instead, which stateIn turns back into the recorded
// requestState on the retry, so that the retry pairs with the recorded
// retry and a completion it brings names the ids this result handed out,
// also where requests share one replay state (no sessions).
func (s *session) freshInputRequests(raw []byte, result json.RawMessage, chosen map[string]string) []byte {
	var r struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState *string `json:"requestState"`
	}
	if !bytes.Contains(result, []byte(`"inputRequests"`)) || json.Unmarshal(result, &r) != nil {
		return raw
	}
	chain := &mrtrChain{state: r.RequestState, ids: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(r.InputRequests)) {
		ir := r.InputRequests[k]
		if ir.Method != "elicitation/create" {
			continue
		}
		rec, _ := stringAt(ir.Params, "elicitationId")
		if mode, _ := stringAt(ir.Params, "mode"); mode != "url" || rec == "" {
			continue
		}
		p, err := s.freshElicitation(ir.Params, chosen)
		if err != nil {
			continue
		}
		out, err := jsonrpc.SetMember(raw, p, "result", "inputRequests", k, "params")
		if err != nil {
			continue
		}
		raw = out
		chain.ids[rec], _ = stringAt(p, "elicitationId")
	}
	if len(chain.ids) == 0 {
		return raw
	}
	token := "mcpmock-" + newTaskID()
	out, err := jsonrpc.SetMember(raw, mustJSON(token), "result", "requestState")
	if err != nil {
		return raw
	}
	s.mu.Lock()
	if s.chains == nil {
		s.chains = map[string]*mrtrChain{}
	}
	s.chains[token] = chain
	s.chainOrder = append(s.chainOrder, token)
	if len(s.chainOrder) > maxChains {
		delete(s.chains, s.chainOrder[0])
		s.chainOrder = s.chainOrder[1:]
	}
	s.mu.Unlock()
	return out
}

// maxChains bounds the requestState tokens a replay state keeps: a retry
// of an older one pairs as a retry with an unknown requestState would.
const maxChains = 4096

// mrtrChain is what the replay handed out in one input_required result
// under a requestState token of its own (freshInputRequests).
type mrtrChain struct {
	state *string           // the recorded requestState; nil when it had none
	ids   map[string]string // recorded elicitationId → the live one handed out
}

// stateIn turns the requestState token of a retry back into the recorded
// requestState (or takes it out, where the recorded result had none) and
// returns what that result handed out. Other requests go unchanged.
func (s *session) stateIn(msg *jsonrpc.Message) (*jsonrpc.Message, *mrtrChain) {
	// Only a token the replay handed out is turned back.
	raw := s.paramsOf(msg.Params).RequestState
	if !bytes.HasPrefix(raw, []byte(`"mcpmock-`)) {
		return msg, nil
	}
	token, ok := jsonrpc.Unquote(raw)
	if !ok {
		return msg, nil
	}
	s.mu.Lock()
	stored := s.chains[token]
	s.mu.Unlock()
	if stored == nil {
		return msg, nil
	}
	chain := &mrtrChain{state: stored.state, ids: stored.ids}
	var params json.RawMessage
	var err error
	if chain.state != nil {
		params, err = jsonrpc.SetMember(msg.Params, mustJSON(*chain.state), "requestState")
	} else {
		params, err = jsonrpc.DeleteMember(msg.Params, "requestState")
	}
	if err != nil {
		return msg, chain
	}
	m, err := jsonrpc.Parse(jsonrpc.Request(msg.ID, msg.Method, params))
	if err != nil {
		return msg, chain
	}
	return m, chain
}
