package replayer

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// markInputRequired finds the "input_required" of a message quickly (jsonrpc.Marker).
var markInputRequired = jsonrpc.NewMarker(`"input_required"`)

// This file answers -32021 (MissingRequiredClientCapability, 2026-07-28):
// a live request whose replayed answer would ask the client for input it
// did not declare it can give (an input_required result with an
// elicitation/create, sampling/createMessage or roots/list among its
// inputRequests, or such a server-to-client request in the exchange) gets
// the error a server that checks its client's per-request capabilities
// answers, instead of the recorded answer.

// CodeMissingRequiredClientCapability is the JSON-RPC error code of a
// request that needs a client capability the request's
// _meta["io.modelcontextprotocol/clientCapabilities"] does not declare
// (2026-07-28). Over HTTP it comes with status 400.
const CodeMissingRequiredClientCapability = -32021

// declared reports whether caps declares the capability name (an object,
// not null).
func declared(caps map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := caps[name]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// requiredFor adds to missing what the client must declare to be sent the
// server-to-client request method with params, and has not.
func requiredFor(caps map[string]json.RawMessage, method string, params json.RawMessage, missing map[string]map[string]any) {
	need := func(name string, sub ...string) {
		m := missing[name]
		if m == nil {
			m = map[string]any{}
			missing[name] = m
		}
		for _, s := range sub {
			m[s] = map[string]any{}
		}
	}
	switch method {
	case "roots/list":
		if _, ok := declared(caps, "roots"); !ok {
			need("roots")
		}
	case "sampling/createMessage":
		raw, ok := declared(caps, "sampling")
		tools, _ := jsonrpc.Member(params, "tools")
		withTools := len(tools) > 0 && string(tools) != "null" && string(tools) != "[]"
		switch {
		case !ok && withTools:
			need("sampling", "tools")
		case !ok:
			need("sampling")
		case withTools:
			if t, _ := jsonrpc.Member(raw, "tools"); t == nil || string(t) == "null" {
				need("sampling", "tools")
			}
		}
	case "elicitation/create":
		mode := "form"
		if m, _ := jsonrpc.Member(params, "mode"); m != nil {
			json.Unmarshal(m, &mode)
		}
		raw, ok := declared(caps, "elicitation")
		if !ok {
			if mode == "url" {
				need("elicitation", "url")
			} else {
				need("elicitation")
			}
			return
		}
		var modes map[string]json.RawMessage
		json.Unmarshal(raw, &modes)
		_, form := modes["form"]
		_, url := modes["url"]
		if !form && !url {
			form = true // an empty elicitation capability means form mode
		}
		if (mode == "url" && !url) || (mode != "url" && !form) {
			need("elicitation", mode)
		}
	}
}

// inputRequestsOf returns the inputRequests of an input_required result
// (2026-07-28) in a response, or nil.
func inputRequestsOf(response []byte) map[string]struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
} {
	if !markInputRequired.In(response) {
		return nil
	}
	result, err := jsonrpc.Member(response, "result")
	if err != nil || result == nil {
		return nil
	}
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(result, &r) != nil || r.ResultType != "input_required" {
		return nil
	}
	return r.InputRequests
}

// checkClientCaps replaces a plan that would ask the client for input it
// did not declare it can give. A 2026-07-28 request (capabilities in its
// _meta) gets -32021. In the stateful era (the capabilities of the
// session's initialize), a server-to-client request the client cannot
// take is not sent: when the recorded client answered it with an error
// (it could not take it either), the recorded answer follows without it;
// otherwise the recording has no answer for such a client, and the
// request gets -32021 too.
func (s *session) checkClientCaps(msg *jsonrpc.Message, plan *answerPlan) *answerPlan {
	if plan == nil || plan.Miss != nil {
		return plan
	}
	caps, stateful, ok := s.clientCapsFor(msg.Params)
	if !ok {
		return plan
	}
	if stateful {
		return s.checkInitCaps(msg, plan, caps)
	}
	var missing map[string]map[string]any // made for the first request to check
	require := func(method string, params json.RawMessage) {
		if missing == nil {
			missing = map[string]map[string]any{}
		}
		requiredFor(caps, method, params, missing)
	}
	for _, st := range plan.Steps {
		if st.Kind != stepSend || len(st.Message) == 0 {
			continue
		}
		if st.Response {
			for _, ir := range inputRequestsOf(st.Message) {
				require(ir.Method, ir.Params)
			}
			continue
		}
		if m, err := jsonrpc.Parse(st.Message); err == nil && m.Kind() == jsonrpc.KindRequest {
			require(m.Method, m.Params)
		}
	}
	if len(missing) == 0 {
		return plan
	}
	return s.capError(msg, plan, missing)
}

// capError is the -32021 answer to msg for the missing capabilities.
func (s *session) capError(msg *jsonrpc.Message, plan *answerPlan, missing map[string]map[string]any) *answerPlan {
	names := make([]string, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	slices.Sort(names)
	noun := " capability"
	if len(names) > 1 {
		noun = " capabilities"
	}
	text := "Server requires the " + strings.Join(names, " and ") + noun + " for this request"
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": missing})
	s.e.opts.Logger.Warn("answered " + msg.Method + " with -32021: " + text)
	return &answerPlan{Interaction: plan.Interaction, Steps: []step{{Kind: stepSend, Response: true,
		Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{Code: CodeMissingRequiredClientCapability, Message: text, Data: data})}}}
}

// recordedInit is the client capabilities of a recorded initialize at
// cassette position index.
type recordedInit struct {
	index int
	caps  map[string]json.RawMessage
}

// initCapsOf returns the capabilities of initialize params (empty, not
// nil, when it declares none).
func initCapsOf(params json.RawMessage) map[string]json.RawMessage {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(params, &p)
	if p.Capabilities == nil {
		p.Capabilities = map[string]json.RawMessage{}
	}
	return p.Capabilities
}

// recordedCaps returns the capabilities the recorded client declared in the
// session of the interaction at cassette position index: those of the last
// initialize recorded before it, or nil when none was.
func (e *Engine) recordedCaps(index int) map[string]json.RawMessage {
	var caps map[string]json.RawMessage
	for _, in := range e.caps.inits {
		if in.index > index {
			break
		}
		caps = in.caps
	}
	return caps
}

// noteInitialize keeps the capabilities a stateful client declares in its
// initialize.
func (s *session) noteInitialize(msg *jsonrpc.Message) {
	if msg.Method != "initialize" || msg.Kind() != jsonrpc.KindRequest {
		return
	}
	caps := initCapsOf(msg.Params)
	s.mu.Lock()
	s.initCaps = caps
	s.mu.Unlock()
}

// lacks returns what the live client (caps) must declare to be sent the
// server-to-client request method with params and has not, leaving out
// what the recorded client (rec, nil when unknown) did not declare either:
// the recording then shows what the server does for such a client.
func lacks(caps, rec map[string]json.RawMessage, method string, params json.RawMessage) map[string]map[string]any {
	need := map[string]map[string]any{}
	requiredFor(caps, method, params, need)
	if len(need) == 0 || rec == nil {
		return need
	}
	recNeed := map[string]map[string]any{}
	requiredFor(rec, method, params, recNeed)
	if len(recNeed) > 0 {
		return nil // the recorded client lacked it as well
	}
	return need
}

// clientCapsFor returns the capabilities the client declared for a
// request: those of a 2026-07-28 request's _meta, or else (stateful true)
// those of the session's initialize. ok is false when neither is known.
func (s *session) clientCapsFor(params json.RawMessage) (caps map[string]json.RawMessage, stateful, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if caps, ok := s.clientCapsMemo(params); ok {
		return caps, false, true
	}
	if s.initCaps == nil || s.modern {
		return nil, false, false
	}
	return s.initCaps, true, true
}

// clientCapsMemo returns the capabilities a request declares in its _meta,
// and whether it declares any (the key is present). A 2026-07-28 client
// repeats them in every request, so the last ones decoded are kept with
// their JSON and not decoded again; callers only read the map. s.mu is
// held.
func (s *session) clientCapsMemo(params json.RawMessage) (map[string]json.RawMessage, bool) {
	raw := s.paramsOf(params).ClientCapabilities
	if raw == nil {
		return nil, false
	}
	if s.capsMemo != nil && bytes.Equal(raw, s.capsMemoRaw) {
		return s.capsMemo, true
	}
	caps := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &caps) != nil {
		return nil, false
	}
	s.capsMemoRaw, s.capsMemo = append(s.capsMemoRaw[:0], raw...), caps
	return caps, true
}

// recordedError reports whether a recorded reply is an error response.
func recordedError(reply json.RawMessage) bool {
	m, err := jsonrpc.Parse(reply)
	return err == nil && m.Error != nil
}

// checkInitCaps is checkClientCaps for a stateful session.
func (s *session) checkInitCaps(msg *jsonrpc.Message, plan *answerPlan, caps map[string]json.RawMessage) *answerPlan {
	var rec map[string]json.RawMessage
	if plan.Interaction > 0 {
		rec = s.e.recordedCaps(plan.Interaction - 1)
	}
	var missing map[string]map[string]any // made for the first capability missing
	var skip []int
	for i, st := range plan.Steps {
		if st.Kind == stepSend && st.Response && bytes.Contains(st.Message, []byte(`-32042`)) {
			// A URLElicitationRequiredError asks for URL-mode elicitation
			// (protocol_elicit.go).
			if m, err := jsonrpc.Parse(st.Message); err == nil && m.Error != nil && m.Error.Code == CodeURLElicitationRequired {
				for k, v := range lacks(caps, rec, "elicitation/create", json.RawMessage(`{"mode":"url"}`)) {
					if missing == nil {
						missing = map[string]map[string]any{}
					}
					missing[k] = v
				}
			}
			continue
		}
		if st.Kind != stepSend || st.Response || st.Notify || !bytes.Contains(st.Message, []byte(`"method"`)) {
			continue
		}
		m, err := jsonrpc.Parse(st.Message)
		if err != nil || m.Kind() != jsonrpc.KindRequest {
			continue
		}
		need := map[string]map[string]any{}
		requiredFor(caps, m.Method, m.Params, need)
		if len(need) == 0 {
			continue
		}
		await := -1
		for j := i + 1; j < len(plan.Steps); j++ {
			if plan.Steps[j].Kind == stepAwaitReply && plan.Steps[j].replyID == m.ID {
				await = j
				break
			}
		}
		refused := await >= 0 && recordedError(plan.Steps[await].expect)
		asRecorded := len(lacks(caps, rec, m.Method, m.Params)) == 0 // the recorded client lacked it too
		if !refused && asRecorded {
			continue // and took it: the recording shows this client's server
		}
		if !refused && await >= 0 {
			if missing == nil {
				missing = map[string]map[string]any{}
			}
			for k, v := range need {
				if missing[k] == nil {
					missing[k] = v
				} else {
					maps.Copy(missing[k], v)
				}
			}
			continue
		}
		// Not sent: the recorded client refused it (the recorded answer
		// is what follows a refusal), or it belongs to no request.
		s.e.opts.Logger.Warn("not sent " + m.Method + ": the client did not declare the capability")
		skip = append(skip, i)
		if await >= 0 {
			skip = append(skip, await)
		}
		s.mu.Lock()
		delete(s.awaiting, m.ID)
		s.mu.Unlock()
	}
	if len(missing) > 0 {
		return s.capError(msg, plan, missing)
	}
	if len(skip) == 0 {
		return plan
	}
	out := *plan
	out.Steps = nil
	for i, st := range plan.Steps {
		if !slices.Contains(skip, i) {
			out.Steps = append(out.Steps, st)
		}
	}
	return &out
}

// preferFitting keeps, of several recorded requests that match, those
// whose recorded answer needs no capability the live client lacks (or
// whose recorded client answered such a request with an error, as the
// live one would): what the server did for a client like this one.
func (s *session) preferFitting(live matcher.Request, matches []int) []int {
	if len(matches) < 2 {
		return matches
	}
	caps, stateful, ok := s.clientCapsFor(live.Params)
	if !ok {
		return matches
	}
	var fit []int
	for _, n := range matches {
		r := &s.e.requests[n]
		var rec map[string]json.RawMessage
		if stateful {
			rec = s.e.recordedCaps(r.index)
		}
		if fits(r.interaction, caps, rec) {
			fit = append(fit, n)
		}
	}
	if len(fit) == 0 || len(fit) == len(matches) {
		return matches
	}
	return fit
}

// fits reports whether a recorded interaction asks nothing of a client
// with caps that its recorded client (rec, when known) did not lack or
// refuse.
func fits(in *cassettes.Interaction, caps, rec map[string]json.RawMessage) bool {
	if in.Response != nil {
		missing := map[string]map[string]any{}
		for _, ir := range inputRequestsOf(in.Response.Message) {
			requiredFor(caps, ir.Method, ir.Params, missing)
		}
		if len(missing) > 0 {
			return false
		}
	}
	for i, x := range in.Exchange {
		if x.From != cassettes.FromServer || x.Message == nil {
			continue
		}
		m, err := jsonrpc.Parse(x.Message)
		if err != nil || m.Kind() != jsonrpc.KindRequest {
			continue
		}
		if len(lacks(caps, rec, m.Method, m.Params)) == 0 {
			continue
		}
		refused := false
		for _, r := range in.Exchange[i+1:] {
			if r.From != cassettes.FromClient || r.Message == nil {
				continue
			}
			if rm, err := jsonrpc.Parse(r.Message); err == nil && rm.Kind() == jsonrpc.KindResponse && rm.ID == m.ID {
				refused = rm.Error != nil
				break
			}
		}
		if !refused {
			return false
		}
	}
	return true
}

// asksClient reports whether a recorded interaction asks the client for
// input that needs a client capability.
func asksClient(in *cassettes.Interaction) bool {
	if in.Response != nil && (inputRequestsOf(in.Response.Message) != nil || bytes.Contains(in.Response.Message, []byte("-32042"))) {
		return true
	}
	none := map[string]json.RawMessage{}
	for _, x := range in.Exchange {
		if x.From != cassettes.FromServer || x.Message == nil || !bytes.Contains(x.Message, []byte(`"method"`)) {
			continue
		}
		if m, err := jsonrpc.Parse(x.Message); err == nil && m.Kind() == jsonrpc.KindRequest {
			need := map[string]map[string]any{}
			requiredFor(none, m.Method, m.Params, need)
			if len(need) > 0 {
				return true
			}
		}
	}
	return false
}
