package guard

import (
	"encoding/json"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Destructive is the Confirm pattern that matches the tools that may be
// destructive.
const Destructive = "destructive"

// RateLimit allows at most N calls of the matching tools in any window of
// Per.
type RateLimit struct {
	Tool string // a glob of tool names
	N    int
	Per  time.Duration
}

func (r RateLimit) String() string { return fmt.Sprintf("%s=%d/%s", r.Tool, r.N, r.Per) }

// ParseRateLimit parses "TOOL=N/DURATION" ("get_weather=5/1m",
// "*=100/1h"); a DURATION without a number means one ("5/m" is 5/1m), as
// for every rate of mcpmock's flags.
func ParseRateLimit(s string) (RateLimit, error) {
	tool, rest, ok := strings.Cut(s, "=")
	if !ok || tool == "" {
		return RateLimit{}, fmt.Errorf("rate limit %q: want TOOL=N/DURATION, as get_weather=5/1m", s)
	}
	r, err := rate.Parse(rest)
	if err == nil && r.N == 0 {
		err = fmt.Errorf("no rate")
	}
	if err != nil {
		return RateLimit{}, fmt.Errorf("rate limit %q (TOOL=N/DURATION, as get_weather=5/1m): %v", s, err)
	}
	if err := checkGlobs([]string{tool}); err != nil {
		return RateLimit{}, err
	}
	return RateLimit{Tool: tool, N: r.N, Per: r.Per}, nil
}

func checkGlobs(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("tool pattern %q: %w", g, err)
		}
	}
	return nil
}

func matchAny(globs []string, name string) string {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return g
		}
	}
	return ""
}

// refused says which flag refuses the tool, or "".
func (g *Guard) refused(name string) string {
	if p := matchAny(g.o.Deny, name); p != "" {
		return "--deny-tools " + p
	}
	if len(g.o.Allow) > 0 && matchAny(g.o.Allow, name) == "" {
		return "--allow-tools " + strings.Join(g.o.Allow, ",")
	}
	return ""
}

// limited counts a call against its rate limit; it says which limit
// refuses it and when a call will be allowed again, or "".
func (g *Guard) limited(name string) (string, time.Duration) {
	for _, rl := range g.o.RateLimits {
		if ok, _ := path.Match(rl.Tool, name); !ok {
			continue
		}
		now := g.o.Now()
		g.mu.Lock()
		defer g.mu.Unlock()
		k := rl.String() + "\x00" + name
		recent := g.rate[k][:0]
		for _, t := range g.rate[k] {
			if now.Sub(t) < rl.Per {
				recent = append(recent, t)
			}
		}
		if len(recent) >= rl.N {
			g.rate[k] = recent
			return "--tool-rate-limit " + rl.String(), recent[0].Add(rl.Per).Sub(now).Round(time.Millisecond)
		}
		g.rate[k] = append(recent, now)
		return "", 0
	}
	return "", 0
}

// needsConfirm says which pattern asks for a person, or "".
func (g *Guard) needsConfirm(name string) string {
	for _, p := range g.o.Confirm {
		if p == PinConfirm {
			continue // about definitions, not calls
		}
		if p == Destructive {
			if g.destructive(name) {
				return "--confirm destructive"
			}
			continue
		}
		if ok, _ := path.Match(p, name); ok {
			return "--confirm " + p
		}
	}
	return ""
}

// tool is what tools/list said about a tool.
type tool struct {
	ann          annotations
	outputSchema json.RawMessage
}

type annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

func hint(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// destructive follows the spec's defaults (a tool that is not read-only is
// destructive unless it says otherwise); untrusted hints never lower the
// caution, so then every tool may be destructive.
func (g *Guard) destructive(name string) bool {
	if !g.o.TrustServer {
		return true
	}
	g.mu.Lock()
	t := g.tools[name]
	g.mu.Unlock()
	if t == nil {
		return true
	}
	return !hint(t.ann.ReadOnlyHint, false) && hint(t.ann.DestructiveHint, true)
}

// hints describes a tool's annotations for people.
func (g *Guard) hints(name string) string {
	g.mu.Lock()
	t := g.tools[name]
	g.mu.Unlock()
	if t == nil {
		return "not listed by the server"
	}
	return g.describe(t.ann)
}

func (g *Guard) describe(a annotations) string {
	var parts []string
	if hint(a.ReadOnlyHint, false) {
		parts = append(parts, "read-only")
	} else {
		if hint(a.DestructiveHint, true) {
			parts = append(parts, "destructive")
		} else {
			parts = append(parts, "not destructive")
		}
		if hint(a.IdempotentHint, false) {
			parts = append(parts, "idempotent")
		}
	}
	if hint(a.OpenWorldHint, true) {
		parts = append(parts, "open-world")
	} else {
		parts = append(parts, "closed-world")
	}
	s := strings.Join(parts, ", ")
	if !g.o.TrustServer {
		s += " (untrusted hints from the server)"
	}
	return s
}

// listed takes in a page of the client's tools/list: the pin judges it
// (when pinning), then filterList.
func (g *Guard) listed(msg *jsonrpc.Message, raw []byte) Verdict {
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if json.Unmarshal(msg.Result, &res) != nil {
		return Verdict{Forward: raw}
	}
	if g.pin == nil {
		return Verdict{Forward: g.filterList(msg, raw, res.Tools, nil)}
	}
	live := g.pinPage(res.Tools)
	g.pinClientPage(live, res.NextCursor == "")
	return g.pinFilterPage(msg, raw, res.Tools, live)
}

// filterList logs the tools of a tools/list page, remembers their
// annotations and outputSchema, and removes the tools that are not allowed
// or (trusted, when not nil, says which) not trusted by the pin.
func (g *Guard) filterList(msg *jsonrpc.Message, raw []byte, tools []json.RawMessage, trusted func(i int) bool) []byte {
	var kept []json.RawMessage
	for i, rt := range tools {
		if _, ok := g.expose(rt, trusted == nil || trusted(i)); ok {
			kept = append(kept, rt)
		}
	}
	if len(kept) == len(tools) {
		return raw
	}
	if kept == nil {
		kept = []json.RawMessage{}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return raw
	}
	result, err := jsonrpc.SetMember(msg.Result, b, "tools")
	if err != nil {
		return raw
	}
	return jsonrpc.Response(msg.ID, result)
}

// expose logs one tool of a tools/list answer and remembers its
// annotations and outputSchema; it says whether the client may see it.
// pinned says whether the pin trusts the tool's definition.
func (g *Guard) expose(rt json.RawMessage, pinned bool) (name string, ok bool) {
	var t struct {
		Name         string          `json:"name"`
		Annotations  annotations     `json:"annotations"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(rt, &t) != nil {
		return "", true
	}
	if by := g.refused(t.Name); by != "" {
		g.log.Info(fmt.Sprintf("⚑ tool %s: hidden from the client (%s)", t.Name, by), slog.String("tool", t.Name), slog.String("guard", "hidden"))
		return t.Name, false
	}
	if !pinned {
		g.log.Info(fmt.Sprintf("⚑ tool %s: hidden from the client (--pin %s)", t.Name, g.pin.path), slog.String("tool", t.Name), slog.String("guard", "hidden"))
		return t.Name, false
	}
	g.mu.Lock()
	g.tools[t.Name] = &tool{ann: t.Annotations, outputSchema: t.OutputSchema}
	g.mu.Unlock()
	extra := ""
	if len(t.OutputSchema) > 0 {
		extra = ", has an outputSchema"
	}
	if c := g.needsConfirm(t.Name); c != "" {
		extra += ", calls need confirmation"
	}
	g.log.Info(fmt.Sprintf("⚑ tool %s: %s%s", t.Name, g.describe(t.Annotations), extra), slog.String("tool", t.Name), slog.String("guard", "exposed"))
	return t.Name, true
}
