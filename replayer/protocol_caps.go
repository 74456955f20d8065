package replayer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

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

// metaClientCapabilities is the per-request _meta key of the client's
// capabilities (2026-07-28).
const metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// clientCapsOf returns the capabilities a request declares in its _meta,
// and whether it declares any (the key is present).
func clientCapsOf(params json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(params) == 0 || !bytes.Contains(params, []byte(metaClientCapabilities)) {
		return nil, false
	}
	meta, err := jsonrpc.Member(params, "_meta")
	if err != nil || meta == nil {
		return nil, false
	}
	raw, err := jsonrpc.Member(meta, metaClientCapabilities)
	if err != nil || raw == nil {
		return nil, false
	}
	caps := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &caps) != nil {
		return nil, false
	}
	return caps, true
}

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

// checkClientCaps replaces a plan that would ask a 2026-07-28 client for
// input it did not declare it can give with -32021.
func (s *Session) checkClientCaps(msg *jsonrpc.Message, plan *Plan) *Plan {
	if plan == nil || plan.Miss != nil {
		return plan
	}
	caps, ok := clientCapsOf(msg.Params)
	if !ok {
		return plan
	}
	missing := map[string]map[string]any{}
	for _, st := range plan.Steps {
		if st.Kind != StepSend || len(st.Message) == 0 {
			continue
		}
		if st.Response {
			if !bytes.Contains(st.Message, []byte(`"input_required"`)) {
				continue
			}
			result, err := jsonrpc.Member(st.Message, "result")
			if err != nil || result == nil {
				continue
			}
			var r struct {
				ResultType    string `json:"resultType"`
				InputRequests map[string]struct {
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				} `json:"inputRequests"`
			}
			if json.Unmarshal(result, &r) != nil || r.ResultType != "input_required" {
				continue
			}
			for _, ir := range r.InputRequests {
				requiredFor(caps, ir.Method, ir.Params, missing)
			}
			continue
		}
		if m, err := jsonrpc.Parse(st.Message); err == nil && m.Kind() == jsonrpc.KindRequest {
			requiredFor(caps, m.Method, m.Params, missing)
		}
	}
	if len(missing) == 0 {
		return plan
	}
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
	return &Plan{Interaction: plan.Interaction, Steps: []Step{{Kind: StepSend, Response: true,
		Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{Code: CodeMissingRequiredClientCapability, Message: text, Data: data})}}}
}
