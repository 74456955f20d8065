package replayer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file gives URL-mode elicitation (2025-11-25) its semantics in
// replay. The elicitationId is the server's: each replayed URL-mode
// elicitation/create, and each elicitation of a replayed -32042
// (URLElicitationRequiredError), hands the client a fresh one (also where
// the recorded id appears in the url), and a replayed
// notifications/elicitation/complete names the live id of the elicitation
// it completes. A completion of an elicitation the session was never sent
// is not sent.

// CodeURLElicitationRequired is the JSON-RPC error code of a request that
// cannot be processed until URL-mode elicitations complete (2025-11-25).
const CodeURLElicitationRequired = -32042

const methodElicitationComplete = "notifications/elicitation/complete"

// elicitOut maps the elicitation ids of a plan's messages to live ones.
func (s *Session) elicitOut(plan *Plan) *Plan {
	if plan == nil || !slices.ContainsFunc(plan.Steps, func(st Step) bool {
		return st.Kind == StepSend && bytes.Contains(st.Message, []byte(`"elicitationId"`))
	}) {
		return plan
	}
	out := *plan
	out.Steps = nil
	for _, st := range plan.Steps {
		if st.Kind == StepSend && bytes.Contains(st.Message, []byte(`"elicitationId"`)) {
			msg, keep := s.relicit(st.Message)
			if !keep {
				s.e.opts.Logger.Warn("not sent " + methodElicitationComplete + ": it completes an elicitation this session was not sent")
				continue
			}
			st.Message = msg
		}
		out.Steps = append(out.Steps, st)
	}
	return &out
}

// relicit rewrites one message; keep is false for a completion of an
// elicitation the session was never sent.
func (s *Session) relicit(raw []byte) (out []byte, keep bool) {
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return raw, true
	}
	switch {
	case m.Method == "elicitation/create" && m.Kind() == jsonrpc.KindRequest:
		if mode, _ := stringAt(m.Params, "mode"); mode != "url" {
			return raw, true
		}
		p, err := s.freshElicitation(m.Params)
		if err != nil {
			return raw, true
		}
		if out, err = jsonrpc.SetMember(raw, p, "params"); err != nil {
			return raw, true
		}
		return out, true
	case m.Method == methodElicitationComplete:
		rec, ok := stringAt(m.Params, "elicitationId")
		if !ok {
			return raw, true
		}
		s.mu.Lock()
		live, known := s.elicits[rec]
		s.mu.Unlock()
		if !known {
			return raw, false
		}
		if out, err = jsonrpc.SetMember(raw, mustJSON(live), "params", "elicitationId"); err != nil {
			return raw, true
		}
		return out, true
	case m.Kind() == jsonrpc.KindResponse && m.Error != nil && m.Error.Code == CodeURLElicitationRequired:
		var data struct {
			Elicitations []json.RawMessage `json:"elicitations"`
		}
		if json.Unmarshal(m.Error.Data, &data) != nil || len(data.Elicitations) == 0 {
			return raw, true
		}
		for i, el := range data.Elicitations {
			if p, err := s.freshElicitation(el); err == nil {
				data.Elicitations[i] = p
			}
		}
		d, _ := json.Marshal(data.Elicitations)
		if out, err = jsonrpc.SetMember(raw, d, "error", "data", "elicitations"); err != nil {
			return raw, true
		}
		return out, true
	}
	return raw, true
}

// freshElicitation gives the URL-mode elicitation params p a new live
// elicitationId (also in its url) and remembers it.
func (s *Session) freshElicitation(p json.RawMessage) (json.RawMessage, error) {
	rec, ok := stringAt(p, "elicitationId")
	if !ok || rec == "" {
		return p, nil
	}
	live := newTaskID()
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
