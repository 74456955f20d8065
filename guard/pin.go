package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Decisions about tool definitions in the audit log (Options.PinFile).
const (
	// DecisionPinned: the definition was written to the pin file (first
	// sight, --pin-update, or accepted by a person).
	DecisionPinned = "pinned"
	// DecisionPinBlocked: a changed or new definition was hidden from the
	// client, and calls to it are refused.
	DecisionPinBlocked = "pin-blocked"
	// DecisionPinRemoved: a pinned tool that the server no longer lists.
	DecisionPinRemoved = "pin-removed"
)

// PinConfirm is the Confirm pattern that puts every changed or new tool
// definition to the person, without asking about calls.
const PinConfirm = "pin"

// pinListWait bounds how long a call to a tool that the server has not
// listed yet waits for the guard's own tools/list.
const pinListWait = 30 * time.Second

// pinner is the guard's tool pinning: the pin file, the definitions the
// server lists now, and the person's decisions.
type pinner struct {
	path   string
	update bool

	mu sync.Mutex // guards the fields below
	// file is the pin as last read or written; pinned indexes its tools.
	file   pinFile
	pinned map[string]pinnedTool
	// learning: the pin file was absent, or --pin-update: the first
	// complete listing is pinned.
	learning bool
	// listed: a complete listing was judged; listing are the names of the
	// client's pages since the last complete one.
	listed  bool
	listing map[string]bool
	// own is the guard's own listing that calls to unlisted tools wait
	// for, while it is in flight.
	own *ownList
	// current is the definition the server listed last, by name.
	current map[string]liveTool
	// decided are the person's decisions, by name and fingerprint.
	decided map[string]*pinDecision
	// reported are the definitions and removals already audited.
	reported map[string]bool
}

type liveTool struct {
	fp        string
	canonical json.RawMessage
}

type pinDecision struct {
	done     chan struct{} // closed once decided
	accepted bool
	final    bool // a person answered (not a timeout, not withdrawn)
}

func newPinner(path string, update bool, source string) (*pinner, error) {
	f, err := loadPin(path)
	if err != nil {
		return nil, err
	}
	p := &pinner{path: path, update: update, pinned: map[string]pinnedTool{}, listing: map[string]bool{},
		current: map[string]liveTool{}, decided: map[string]*pinDecision{}, reported: map[string]bool{}}
	if f == nil {
		f = &pinFile{Version: PinVersion, Server: pinServer{Source: source}}
		p.learning = true
	}
	p.learning = p.learning || update
	p.file = *f
	for _, t := range f.Tools {
		p.pinned[t.Name] = t
	}
	return p, nil
}

// pinRef names the pin file, for messages.
func (g *Guard) pinRef() string { return fmt.Sprintf("the pin file %s", g.pin.path) }

// noteServer remembers the serverInfo of an initialize answer (or the
// _meta "io.modelcontextprotocol/serverInfo" of a 2026-07-28 result), for a
// pin file written later, and warns when a pin of another server is
// enforced.
func (g *Guard) noteServer(result json.RawMessage) {
	info, _ := jsonrpc.Member(result, "serverInfo")
	if info == nil {
		if meta, _ := jsonrpc.Member(result, "_meta"); meta != nil {
			info, _ = jsonrpc.Member(meta, mcp.MetaServerInfo)
		}
	}
	var s struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if info == nil || json.Unmarshal(info, &s) != nil || s.Name == "" {
		return
	}
	p := g.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.learning {
		p.file.Server.Name, p.file.Server.Version = s.Name, s.Version
		return
	}
	if p.file.Server.Name != "" && p.file.Server.Name != s.Name && !p.reported["server\x00"+s.Name] {
		p.reported["server\x00"+s.Name] = true
		g.log.Warn(fmt.Sprintf("guard: %s was written for server %q, and this server says it is %q", g.pinRef(), p.file.Server.Name, s.Name))
	}
}

// pinPage takes in the tools of one tools/list page: they become the
// server's current definitions; while learning they are pinned (and the
// file written); else each that differs from the pin is logged, and
// audited when no one will be asked about it. It returns each tool's name
// and fingerprint (name "" for a tool it cannot read).
func (g *Guard) pinPage(tools []json.RawMessage) []liveName {
	p := g.pin
	out := make([]liveName, len(tools))
	type note struct{ name, decision, by, reason, fp, pinned string }
	var notes []note
	p.mu.Lock()
	dirty := false
	for i, rt := range tools {
		fp, canon, err := Fingerprint(rt)
		if err != nil {
			continue
		}
		name := pinnedName(canon)
		out[i] = liveName{name, fp}
		p.current[name] = liveTool{fp, canon}
		old, had := p.pinned[name]
		if had && old.Fingerprint == fp {
			continue
		}
		if p.learning {
			p.pinned[name] = pinnedTool{Name: name, Fingerprint: fp, Definition: canon}
			dirty = true
			by, reason := "--pin "+p.path, "first seen: pinned"
			if p.update {
				by = "--pin-update"
				if had {
					reason = "the server's current definition: " + strings.Join(changedFields(old.Definition, canon), ", ") + " changed"
				} else {
					reason = "the server's current definition: a new tool"
				}
			}
			notes = append(notes, note{name, DecisionPinned, by, reason, fp, old.Fingerprint})
			continue
		}
		k := "def\x00" + name + "\x00" + fp
		if p.reported[k] {
			continue
		}
		p.reported[k] = true
		what := describeChange(old, had, canon, p.path)
		g.log.Warn(fmt.Sprintf("⚑ tool %s: %s", name, what), slog.String("tool", name), slog.String("guard", "pin-changed"))
		if g.pinAskable(name) {
			continue
		}
		notes = append(notes, note{name, DecisionPinBlocked, "--pin " + p.path, what + ": hidden from the client, calls refused", fp, old.Fingerprint})
	}
	var saveErr error
	if dirty {
		saveErr = p.saveLocked()
	}
	p.mu.Unlock()
	if saveErr != nil {
		g.log.Error(fmt.Sprintf("guard: %v", saveErr))
	}
	for _, n := range notes {
		g.decidePin(n.name, n.decision, n.by, n.reason, n.fp, n.pinned)
	}
	return out
}

type liveName struct{ name, fp string }

// pinClientPage adds the names of a page of the client's tools/list to its
// listing, which the last page (no nextCursor) ends. (Over Streamable HTTP
// each page comes on a POST of its own: the listing is the union of the
// pages of every client since the last complete one.)
func (g *Guard) pinClientPage(live []liveName, last bool) {
	p := g.pin
	p.mu.Lock()
	for _, n := range live {
		if n.name != "" {
			p.listing[n.name] = true
		}
	}
	names := p.listing
	if last {
		p.listing = map[string]bool{}
	}
	p.mu.Unlock()
	if last {
		g.pinListed(names)
	}
}

// pinListed ends a complete listing (the page without nextCursor) with
// the names it listed: learning ends (--pin-update drops the tools that
// are no longer listed), pinned tools that are not listed are reported
// once, and the calls that waited for a listing go on.
func (g *Guard) pinListed(names map[string]bool) {
	p := g.pin
	p.mu.Lock()
	var gone []string
	fps := map[string]string{}
	for name, t := range p.pinned {
		if !names[name] && !p.reported["gone\x00"+name] {
			gone = append(gone, name)
			fps[name] = t.Fingerprint
		}
	}
	slices.Sort(gone)
	reason := "the server no longer lists it; kept in the pin (its calls go to the server)"
	var saveErr error
	if p.learning && p.update {
		for _, name := range gone {
			delete(p.pinned, name)
		}
		reason = "the server no longer lists it; dropped from the pin (--pin-update)"
		if len(gone) > 0 {
			saveErr = p.saveLocked()
		}
	}
	for _, name := range gone {
		p.reported["gone\x00"+name] = true
	}
	p.learning = false
	p.listed = true
	p.mu.Unlock()
	if saveErr != nil {
		g.log.Error(fmt.Sprintf("guard: %v", saveErr))
	}
	for _, name := range gone {
		g.log.Warn(fmt.Sprintf("⚑ tool %s: pinned, but %s", name, reason), slog.String("tool", name), slog.String("guard", DecisionPinRemoved))
		g.decidePin(name, DecisionPinRemoved, "--pin "+p.path, reason, "", fps[name])
	}
}

// saveLocked writes the pin file from pinned; p.mu is held.
func (p *pinner) saveLocked() error {
	p.file.Version = PinVersion
	p.file.Tools = p.file.Tools[:0]
	for _, t := range p.pinned {
		p.file.Tools = append(p.file.Tools, t)
	}
	if p.file.Tools == nil {
		p.file.Tools = []pinnedTool{}
	}
	return savePin(p.path, &p.file)
}

// trusted says whether the definition fp of tool name may reach the
// client: it is the pinned one (or is being pinned).
func (g *Guard) trusted(n liveName) bool {
	p := g.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.learning || p.pinned[n.name].Fingerprint == n.fp
}

// pinAskable says whether a person is asked about a changed definition of
// the tool: --confirm pin, or a --confirm pattern that matches it, and a
// terminal.
func (g *Guard) pinAskable(name string) bool {
	if g.o.Prompter == nil {
		return false
	}
	return slices.Contains(g.o.Confirm, PinConfirm) || g.needsConfirm(name) != ""
}

// pinState is what the pin says about a tool the client calls.
type pinState int

const (
	pinOK       pinState = iota // its current definition is pinned
	pinPending                  // it differs from the pin, and no one decided
	pinDeclined                 // a person declined its current definition
	pinUnlisted                 // the server has not listed it
)

func (g *Guard) pinStateOf(name string) (pinState, liveTool) {
	p := g.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.current[name]
	switch {
	case !ok:
		return pinUnlisted, cur
	case p.learning || p.pinned[name].Fingerprint == cur.fp:
		return pinOK, cur
	}
	if d := p.decided[name+"\x00"+cur.fp]; d != nil && d.final && !d.accepted {
		return pinDeclined, cur
	}
	return pinPending, cur
}

// pinCall decides about a call as the pin says: nil to go on with the
// rest of the policy (then), a refusal, or a hold that waits for a listing
// or a person and then goes on.
func (g *Guard) pinCall(k key, ev event, inBatch bool, then func(ctx context.Context) Verdict) *Verdict {
	st, cur := g.pinStateOf(ev.Tool)
	switch st {
	case pinOK:
		return nil
	case pinUnlisted:
		p := g.pin
		p.mu.Lock()
		listed := p.listed
		p.mu.Unlock()
		if listed || inBatch {
			return g.pinUnlistedCall(k, ev)
		}
		wait, req := g.pinOwnList(k.session)
		return &Verdict{ToServer: req, Hold: func(ctx context.Context) Verdict {
			t := time.NewTimer(pinListWait)
			defer t.Stop()
			select {
			case <-wait:
			case <-t.C:
				g.log.Warn(fmt.Sprintf("guard: the server did not answer the guard's own tools/list within %s; tool %s is judged by its name", pinListWait, ev.Tool))
				g.pinOwnAbandon(wait)
			case <-ctx.Done():
			}
			if st, _ := g.pinStateOf(ev.Tool); st == pinUnlisted {
				if v := g.pinUnlistedCall(k, ev); v != nil {
					return *v
				}
				return then(ctx)
			}
			if v := g.pinCall(k, ev, false, then); v != nil {
				if v.Hold != nil {
					return v.Hold(ctx)
				}
				return *v
			}
			return then(ctx)
		}}
	case pinPending:
		if g.pinAskable(ev.Tool) && !inBatch {
			return &Verdict{Hold: func(ctx context.Context) Verdict {
				if g.resolvePin(ctx, ev.Tool, cur) {
					return then(ctx)
				}
				return g.pinRefusal(k, ev, cur)
			}}
		}
	}
	v := g.pinRefusal(k, ev, cur)
	return &v
}

// pinUnlistedCall decides about a call to a tool that the server has not
// listed: a pinned name goes on (the server answers for it), others are
// refused, unless the pin is being written.
func (g *Guard) pinUnlistedCall(k key, ev event) *Verdict {
	p := g.pin
	p.mu.Lock()
	ok := p.learning
	_, pinned := p.pinned[ev.Tool]
	p.mu.Unlock()
	if ok || pinned {
		return nil
	}
	why := fmt.Sprintf("tool %q is not in %s and the server has not listed it", ev.Tool, g.pinRef())
	g.decide(ev, DecisionDeny, "--pin "+p.path, why)
	v := Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q was refused: it is not in %s and the server has not listed it; it was not made", ev.Tool, g.pinRef()))}
	return &v
}

// pinOwnList returns the guard's own listing that calls to unlisted tools
// wait for (a channel closed when it ends) and, when none is in flight,
// the request that starts it.
func (g *Guard) pinOwnList(session string) (<-chan struct{}, []byte) {
	p := g.pin
	p.mu.Lock()
	if ol := p.own; ol != nil {
		p.mu.Unlock()
		return ol.done, nil
	}
	ol := &ownList{seen: map[string]bool{}, done: make(chan struct{})}
	p.own = ol
	p.mu.Unlock()
	g.mu.Lock()
	ol.meta = g.latestMeta
	g.mu.Unlock()
	return ol.done, g.listOwn(session, ol, "")
}

// pinOwnAbandon forgets the guard's own listing whose end is wait, which
// the server never finished: the next call lists again.
func (g *Guard) pinOwnAbandon(wait <-chan struct{}) {
	p := g.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.own != nil && (<-chan struct{})(p.own.done) == wait {
		p.own = nil
	}
}

// pinOwnDone ends the guard's own listing ol (done or failed).
func (g *Guard) pinOwnDone(ol *ownList) {
	if g.pin == nil || ol.done == nil {
		return
	}
	p := g.pin
	p.mu.Lock()
	if p.own == ol {
		p.own = nil
	}
	p.mu.Unlock()
	close(ol.done)
}

// pinRefusal is the tool error for a call to a changed or new tool.
func (g *Guard) pinRefusal(k key, ev event, cur liveTool) Verdict {
	p := g.pin
	p.mu.Lock()
	old, had := p.pinned[ev.Tool]
	d := p.decided[ev.Tool+"\x00"+cur.fp]
	p.mu.Unlock()
	what := describeChange(old, had, cur.canonical, p.path)
	why := "hidden from the client until the pin accepts it: record with --pin-update to accept the server's current definitions, or --confirm pin to decide at the terminal"
	by := "--pin " + p.path
	if d != nil && d.final && !d.accepted {
		why, by = "a person declined the change at the terminal", "person"
	}
	ev.fingerprint, ev.pinned = cur.fp, old.Fingerprint
	g.decide(ev, DecisionDeny, by, what)
	return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q was refused: %s; %s; it was not made", ev.Tool, what, why))}
}

// resolvePin asks the person about the definition cur of tool name, once
// per definition (a question asked for another list or call is waited
// for), and pins it on yes. It reports whether the definition is accepted.
func (g *Guard) resolvePin(ctx context.Context, name string, cur liveTool) bool {
	p := g.pin
	k := name + "\x00" + cur.fp
	for {
		p.mu.Lock()
		if p.pinned[name].Fingerprint == cur.fp {
			p.mu.Unlock()
			return true
		}
		d := p.decided[k]
		if d == nil {
			d = &pinDecision{done: make(chan struct{})}
			p.decided[k] = d
			old, had := p.pinned[name]
			p.mu.Unlock()
			g.askPin(ctx, name, cur, old, had, d)
			return d.accepted
		}
		p.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return false
		}
		if d.final {
			return d.accepted
		}
		// The other question timed out or was withdrawn: ask again.
	}
}

// askPin puts one changed definition to the person and records the
// answer in d.
func (g *Guard) askPin(ctx context.Context, name string, cur liveTool, old pinnedTool, had bool, d *pinDecision) {
	p := g.pin
	what := describeChange(old, had, cur.canonical, p.path)
	c := Change{Tool: name, PinFile: p.path, What: what, Diff: definitionDiff(old.Definition, cur.canonical), Pinned: old.Fingerprint, Current: cur.fp}
	ok, err := g.askChange(ctx, c)
	by, reason := "person", what+": accepted at the terminal"
	switch {
	case err == ErrConfirmTimeout:
		by, reason = "timeout", fmt.Sprintf("%s: no answer at the terminal within %s (--confirm-timeout); hidden from the client", what, g.o.ConfirmTimeout)
	case err != nil:
		by, reason = "prompt", what+": not confirmed: "+err.Error()+"; hidden from the client"
	case !ok:
		reason = what + ": declined at the terminal; hidden from the client, calls refused"
	}
	p.mu.Lock()
	d.accepted, d.final = ok && err == nil, err == nil
	var saveErr error
	if d.accepted {
		p.pinned[name] = pinnedTool{Name: name, Fingerprint: cur.fp, Definition: cur.canonical}
		saveErr = p.saveLocked()
	}
	if !d.final {
		delete(p.decided, name+"\x00"+cur.fp)
	}
	close(d.done)
	p.mu.Unlock()
	if saveErr != nil {
		g.log.Error(fmt.Sprintf("guard: %v", saveErr))
		reason += " (" + saveErr.Error() + ")"
	}
	decision := DecisionPinBlocked
	if d.accepted {
		decision = DecisionPinned
	}
	g.decidePin(name, decision, by, reason, cur.fp, old.Fingerprint)
}

// askChange asks the person, one question at a time, within
// ConfirmTimeout.
func (g *Guard) askChange(ctx context.Context, c Change) (bool, error) {
	return g.ask(ctx, func(ctx context.Context) (bool, error) { return g.o.Prompter.ConfirmChange(ctx, c) })
}

// decidePin logs a decision about a tool definition and audits it.
func (g *Guard) decidePin(name, decision, by, reason, fp, pinned string) {
	level := slog.LevelInfo
	if decision != DecisionPinned {
		level = slog.LevelWarn
	}
	g.log.Log(context.Background(), level, fmt.Sprintf("⚑ tool %s: %s (%s): %s", name, decision, by, reason),
		slog.String("tool", name), slog.String("guard", decision), slog.String("by", by))
	g.audit.write(event{Tool: name, fingerprint: fp, pinned: pinned}, decision, by, reason)
}

// pinFilterPage is the Verdict for a tools/list page when pinning: the
// changed and new tools that a person is asked about hold the page until
// they are decided; then the page goes on without the tools that are not
// trusted.
func (g *Guard) pinFilterPage(msg *jsonrpc.Message, raw []byte, tools []json.RawMessage, live []liveName) Verdict {
	var ask []liveName
	for _, n := range live {
		if n.name != "" && !g.trusted(n) && g.pinAskable(n.name) {
			if st, _ := g.pinStateOf(n.name); st == pinPending {
				ask = append(ask, n)
			}
		}
	}
	filter := func() Verdict {
		return Verdict{Forward: g.filterList(msg, raw, tools, func(i int) bool { return live[i].name == "" || g.trusted(live[i]) })}
	}
	if len(ask) == 0 {
		return filter()
	}
	return Verdict{Hold: func(ctx context.Context) Verdict {
		for _, n := range ask {
			p := g.pin
			p.mu.Lock()
			cur := p.current[n.name]
			p.mu.Unlock()
			if cur.fp == n.fp {
				g.resolvePin(ctx, n.name, cur)
			}
		}
		return filter()
	}}
}

// changedFields names the pinned members that differ between two
// canonical definitions.
func changedFields(old, cur json.RawMessage) []string {
	var o, c map[string]json.RawMessage
	json.Unmarshal(old, &o)
	json.Unmarshal(cur, &c)
	var out []string
	for _, f := range pinnedFields {
		if string(o[f]) != string(c[f]) {
			out = append(out, f)
		}
	}
	return out
}

// describeChange says how a definition differs from its pin in the file
// path: "its description, inputSchema changed since it was pinned in
// server.pin" or "it is a new tool, not in server.pin".
func describeChange(old pinnedTool, had bool, cur json.RawMessage, path string) string {
	if !had {
		return "it is a new tool, not in " + path
	}
	return "its " + strings.Join(changedFields(old.Definition, cur), ", ") + " changed since it was pinned in " + path
}
