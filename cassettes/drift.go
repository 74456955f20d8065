package cassettes

// drift.go: how a live server's answers differ from a recorded cassette
// (the comparison behind `mcpmock cassette verify`).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Drift is one difference between a recorded interaction and the live
// server's answer to the same request.
type Drift struct {
	// Breaking is true when a client that worked against the recording may
	// fail against the live server: a request that now fails, a tool that
	// is gone, a new required argument, a changed argument type.
	Breaking bool
	// Text says what differs, e.g. `interaction 3: tools/call add: now
	// fails: -32602 unknown tool`.
	Text string
}

// String is Text prefixed with "BREAKING: " or "changed: ".
func (d Drift) String() string {
	if d.Breaking {
		return "BREAKING: " + d.Text
	}
	return "changed: " + d.Text
}

// DriftOf compares recorded, the i-th interaction of a cassette (from 0), with
// live, the live server's answer to recorded.Request, and returns the
// differences (none when they agree). A callErr (the live call failed)
// is one breaking Drift; live is not read then. Results are compared with
// _meta removed; initialize and server/discover compare serverInfo, and
// tools/list compares tool by tool (tools gone or added, required arguments,
// argument types, descriptions).
func DriftOf(i int, recorded, live *Interaction, callErr error) []Drift {
	r := &driftReport{}
	if callErr != nil {
		r.add(true, "interaction %d: %s: %v", i+1, describe1(recorded.Request), callErr)
	} else {
		r.compare(i, recorded, live)
	}
	return r.drifts
}

// driftReport collects the drifts of one interaction.
type driftReport struct {
	drifts []Drift
}

func (r *driftReport) add(breaking bool, format string, args ...any) {
	r.drifts = append(r.drifts, Drift{Breaking: breaking, Text: fmt.Sprintf(format, args...)})
}

func describe1(raw []byte) string {
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return "?"
	}
	if m.Method == "tools/call" {
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		return "tools/call " + p.Name
	}
	return m.Method
}

// compare reports how the live answer differs from the recorded one.
func (r *driftReport) compare(i int, in *Interaction, live *Interaction) {
	what := describe1(in.Request)
	var method string
	if m, err := jsonrpc.Parse(in.Request); err == nil {
		method = m.Method
	}
	rec, lv := result(in.Response), result(live.Response)
	recErr, liveErr := errorOf(in.Response), errorOf(live.Response)
	switch {
	case recErr == "" && liveErr != "":
		r.add(true, "interaction %d: %s: now fails: %s", i+1, what, liveErr)
		return
	case recErr != "" && liveErr == "":
		r.add(false, "interaction %d: %s: failed when recorded (%s), now succeeds", i+1, what, recErr)
		return
	case recErr != "":
		return
	}
	switch method {
	case mcp.MethodInitialize, mcp.MethodDiscover:
		r.compareServerInfo(i, rec, lv)
		return
	case "tools/list":
		r.compareTools(rec, lv)
		return
	}
	if !jsonEqual(stripVolatile(rec), stripVolatile(lv)) {
		r.add(false, "interaction %d: %s: the result changed:\n    recorded %.200s\n    live     %.200s", i+1, what, driftJSON(rec), driftJSON(lv))
	}
}

func (r *driftReport) compareServerInfo(i int, rec, live json.RawMessage) {
	get := func(raw json.RawMessage) string {
		var v struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		}
		json.Unmarshal(raw, &v)
		return strings.TrimSpace(v.ServerInfo.Name + " " + v.ServerInfo.Version)
	}
	if a, b := get(rec), get(live); a != b {
		r.add(false, "interaction %d: the server was %q when recorded, is %q now", i+1, a, b)
	}
}

type toolDef struct {
	Name        string `json:"name"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	} `json:"inputSchema"`
	Description string `json:"description"`
}

func tools(raw json.RawMessage) map[string]toolDef {
	var v struct {
		Tools []toolDef `json:"tools"`
	}
	json.Unmarshal(raw, &v)
	out := map[string]toolDef{}
	for _, t := range v.Tools {
		out[t.Name] = t
	}
	return out
}

// compareTools reports tools added and removed and input schema changes.
func (r *driftReport) compareTools(rec, live json.RawMessage) {
	rt, lt := tools(rec), tools(live)
	for _, name := range sortedNames(rt) {
		t := rt[name]
		l, ok := lt[name]
		if !ok {
			r.add(true, "tool %s was removed", name)
			continue
		}
		for _, req := range l.InputSchema.Required {
			if !slices.Contains(t.InputSchema.Required, req) {
				r.add(true, "tool %s: argument %q is now required", name, req)
			}
		}
		for _, p := range sortedNames(t.InputSchema.Properties) {
			lp, ok := l.InputSchema.Properties[p]
			if !ok {
				r.add(true, "tool %s: argument %q was removed", name, p)
				continue
			}
			if a, b := typeOf(t.InputSchema.Properties[p]), typeOf(lp); a != b {
				r.add(true, "tool %s: argument %q changed type from %s to %s", name, p, a, b)
			} else if !jsonEqual(t.InputSchema.Properties[p], lp) {
				r.add(false, "tool %s: argument %q changed its schema: %s -> %s", name, p, driftJSON(t.InputSchema.Properties[p]), driftJSON(lp))
			}
		}
		for _, p := range sortedNames(l.InputSchema.Properties) {
			if _, ok := t.InputSchema.Properties[p]; !ok && !slices.Contains(l.InputSchema.Required, p) {
				r.add(false, "tool %s: optional argument %q was added", name, p)
			}
		}
		if t.Description != l.Description {
			r.add(false, "tool %s: the description changed", name)
		}
	}
	for _, name := range sortedNames(lt) {
		if _, ok := rt[name]; !ok {
			r.add(false, "tool %s was added", name)
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeOf(schema json.RawMessage) string {
	var v struct {
		Type json.RawMessage `json:"type"`
	}
	json.Unmarshal(schema, &v)
	if v.Type == nil {
		return "any"
	}
	return driftJSON(v.Type)
}

func result(m *Message) json.RawMessage {
	if m == nil || m.Message == nil {
		return nil
	}
	msg, err := jsonrpc.Parse(m.Message)
	if err != nil {
		return nil
	}
	return msg.Result
}

func errorOf(m *Message) string {
	if m == nil {
		return "no response"
	}
	if m.Message == nil {
		return "not JSON-RPC"
	}
	msg, err := jsonrpc.Parse(m.Message)
	if err != nil {
		return err.Error()
	}
	if msg.Error != nil {
		return fmt.Sprintf("error %d: %s", msg.Error.Code, msg.Error.Message)
	}
	return ""
}

// stripVolatile drops the _meta of a result: it carries no meaning for the
// drift check.
func stripVolatile(raw json.RawMessage) json.RawMessage {
	out, err := jsonrpc.DeleteMember(raw, "_meta")
	if err != nil {
		return raw
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func driftJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
