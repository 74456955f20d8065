package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/replayer"
)

// cassetteVerify is "mcpmock cassette verify": the drift check. It replays
// the cassette's client requests against the live server and reports what
// differs: tools added or removed, input schema changes (breaking: a tool
// removed, a required argument added, a property's type changed or removed;
// not breaking: a tool or an optional argument added), and results that
// changed. Breaking drift fails the command.
func (e *env) cassetteVerify(ctx context.Context, args []string) error {
	var path, upstream string
	var failOnChange bool
	fs := newFlagSet("cassette verify", "mcpmock cassette verify -c CASSETTE [flags] -- COMMAND [ARG...]\n  mcpmock cassette verify -c CASSETTE [flags] --upstream URL", e.stderr)
	fs.StringVarP(&path, "cassette", "c", "", "cassette file (required)")
	fs.StringVar(&upstream, "upstream", "", "the live server at `URL` (Streamable HTTP) instead of a command")
	fs.BoolVar(&failOnChange, "fail-on-change", false, "also fail when results changed or the change is not breaking")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if path == "" {
		return usagef("cassette verify needs -c CASSETTE")
	}
	if (fs.NArg() == 0) == (upstream == "") {
		return usagef("cassette verify needs the live server: -- COMMAND [ARG...] or --upstream URL")
	}
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	up, err := replayer.DialUpstream(replayer.UpstreamOptions{Command: fs.Args(), URL: upstream, Stderr: e.stderr})
	if err != nil {
		return err
	}
	defer up.Close()
	r := &driftReport{}
	for i, in := range c.Interactions {
		if in.From != cassettes.FromClient || in.Scripted() {
			continue
		}
		if in.Notification != nil {
			if err := up.Notify(ctx, in.Notification); err != nil {
				return err
			}
			continue
		}
		if in.Request == nil {
			continue
		}
		live, err := up.Call(ctx, in.Request)
		if err != nil {
			r.add(true, "interaction %d: %s: %v", i+1, describe1(in.Request), err)
			continue
		}
		r.compare(i, &in, live)
	}
	for _, l := range r.lines {
		fmt.Fprintln(e.stdout, l)
	}
	switch {
	case r.breaking > 0:
		return fmt.Errorf("%s: breaking drift: %d breaking and %d other differences from the live server", path, r.breaking, r.other)
	case r.other > 0 && failOnChange:
		return fmt.Errorf("%s: drift: %d differences from the live server", path, r.other)
	case r.other > 0:
		fmt.Fprintf(e.stdout, "%s: %d differences, none breaking\n", path, r.other)
	default:
		fmt.Fprintf(e.stdout, "%s: no drift\n", path)
	}
	return nil
}

type driftReport struct {
	lines           []string
	breaking, other int
}

func (r *driftReport) add(breaking bool, format string, args ...any) {
	tag := "changed: "
	if breaking {
		tag = "BREAKING: "
		r.breaking++
	} else {
		r.other++
	}
	r.lines = append(r.lines, tag+fmt.Sprintf(format, args...))
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
func (r *driftReport) compare(i int, in *cassettes.Interaction, live *cassettes.Interaction) {
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
		r.add(false, "interaction %d: %s: the result changed:\n    recorded %.200s\n    live     %.200s", i+1, what, compactJSON(rec), compactJSON(lv))
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
				r.add(false, "tool %s: argument %q changed its schema: %s -> %s", name, p, compactJSON(t.InputSchema.Properties[p]), compactJSON(lp))
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
	return compactJSON(v.Type)
}

func result(m *cassettes.Message) json.RawMessage {
	if m == nil || m.Message == nil {
		return nil
	}
	msg, err := jsonrpc.Parse(m.Message)
	if err != nil {
		return nil
	}
	return msg.Result
}

func errorOf(m *cassettes.Message) string {
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

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
