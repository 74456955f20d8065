// Package guard is mcpmock's human-in-the-loop safety layer for MCP tools:
// a policy engine that sits between a client and a server and decides, one
// message at a time, what passes. It has no transport: the tap gives it each
// message and carries out its [Verdict].
//
// The guard shows the tools the server exposes (with their annotations,
// marked as untrusted hints unless the server is trusted) and every
// tools/call in the log; hides denied tools from tools/list and refuses calls
// to them with -32602 as for an unknown tool; holds calls that need a
// person's confirmation; limits the rate of calls per tool; times out calls
// the server does not answer (an error to the client, notifications/cancelled
// to the server); checks results against the tool's outputSchema, content
// types and size; and writes one audit line per decision.
//
//	g, err := guard.New(&guard.Options{Deny: []string{"delete_*"}, CallTimeout: 30 * time.Second})
//	v := g.FromClient("", line) // forward v.Forward, answer v.Reply, or wait on v.Hold
package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/toolschema"
)

// Options configure a Guard. The zero value (or nil) guards nothing but
// still logs the exposed tools and every call, and checks results against
// their tool's outputSchema.
type Options struct {
	// Allow are glob patterns (path.Match syntax) of the tools a client may
	// see and call; empty means every tool.
	Allow []string
	// Deny are glob patterns of tools hidden and refused; Deny wins over
	// Allow.
	Deny []string
	// Confirm are patterns of the calls a person must allow: tool globs, or
	// "destructive" for tools that may be destructive (see TrustServer).
	// With PinFile, a changed or new tool definition that a pattern
	// matches is put to the person too; "pin" (PinConfirm) matches every
	// such definition and no call.
	Confirm []string
	// TrustServer trusts the server's tool annotations. Untrusted, they are
	// shown as hints and can only add caution: "destructive" then matches
	// every tool.
	TrustServer bool
	// Prompter asks the person; nil means there is no terminal, and calls
	// that need confirmation are denied.
	Prompter Prompter
	// ConfirmTimeout is how long a call waits for a person's answer (in
	// line behind other questions included) before it is denied; 0 means
	// it waits as long as the client does.
	ConfirmTimeout time.Duration
	// CallTimeout is how long the server has to answer a tools/call; 0
	// means no limit.
	CallTimeout time.Duration
	// RateLimits limit calls per tool; the first limit whose pattern
	// matches the tool applies.
	RateLimits []RateLimit
	// MaxResultBytes limits the size of a tools/call result; 0 means no
	// limit.
	MaxResultBytes int
	// ContentTypes are the content types a result may carry ("text",
	// "image", "audio", "resource", "resource_link"); empty means any.
	ContentTypes []string
	// NoOutputSchema turns off the check of results against outputSchema.
	NoOutputSchema bool
	// Audit receives one JSON line per decision, each in one Write; nil
	// means no audit log.
	Audit io.Writer
	// Redact are the rules applied to arguments in the audit log; nil
	// means cassettes.DefaultRedactRules.
	Redact *cassettes.RedactRules
	// Logger receives the exposure and decision lines; nil means silent.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// PinFile is the trust anchor of one server's tools (record --pin):
	// "" means no pinning. When the file is absent, the first complete
	// tools/list is written to it; when present, every tools/list page is
	// compared with it, and a changed or new tool is hidden from the
	// client and its calls refused, unless a person accepts it (Confirm
	// "pin", or a pattern that matches the tool, and a Prompter). See
	// Fingerprint for what is pinned. New fails on a corrupt file.
	PinFile string
	// PinUpdate accepts the server's current definitions: the first
	// complete tools/list rewrites the pin file.
	PinUpdate bool
	// PinSource names the server in a pin file written anew (its command
	// or URL); "" leaves it out.
	PinSource string
}

// Verdict says what to do with one message. Exactly one of Forward, Reply
// and Hold is the main action; a zero Verdict drops the message.
type Verdict struct {
	// Forward is the message to pass on, as it came or modified (a
	// tools/list result without denied tools, a result replaced by a tool
	// error).
	Forward []byte
	// Reply is the guard's own answer to the sender of the message (a
	// refusal); the message does not go on.
	Reply []byte
	// Hold, when set, means the message waits for a person or for an
	// answer to ToServer: call it (it may block until the person answers
	// or ctx ends) and carry out the Verdict it returns. A server's message
	// is held on the goroutine that read it (a tools/list page with a
	// changed pinned tool), so the server's messages keep their order.
	Hold func(ctx context.Context) Verdict
	// Timeout, when positive with Forward, is how long the server has to
	// answer; when it passes, call Expire.
	Timeout time.Duration
	// Expire, with Timeout, returns the answer to send the client and the
	// notifications/cancelled to send the server (one message each, in
	// turn), or nils if the server answered in time.
	Expire func() (toClient []byte, toServer [][]byte)
	// ToServer is a request of the guard's own to send the server besides
	// the main action (a tools/list after notifications/tools/list_changed,
	// or its next page). Its answer comes back through FromServer, which
	// keeps it: neither it nor its answer is the client's, nor recorded.
	// With Hold, it is sent first: the hold waits for its answer (a call to
	// a tool the server has not listed yet, when pinning).
	ToServer []byte
}

// Prompter asks a person whether a tool call may go on, and whether a
// changed tool definition may replace its pin.
type Prompter interface {
	// Confirm shows the call and returns the person's answer. An error
	// (no terminal, ctx ended) denies the call.
	Confirm(ctx context.Context, c Call) (bool, error)
	// ConfirmChange shows how a tool's definition differs from its pin
	// and returns the person's answer: true pins the new definition. An
	// error leaves the tool hidden.
	ConfirmChange(ctx context.Context, c Change) (bool, error)
}

// Change is a tool definition that differs from its pin, as the guard
// shows it to a person.
type Change struct {
	Tool    string
	PinFile string
	// What says what differs ("its description changed since it was
	// pinned in server.pin", "it is a new tool, not in server.pin").
	What string
	// Diff is the difference, line by line: "- " pinned, "+ " now.
	Diff string
	// Pinned and Current are the fingerprints; Pinned is "" for a new
	// tool.
	Pinned, Current string
}

// Call is a tools/call as the guard shows it to a person.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	// Hints describes the tool's annotations ("destructive, open-world
	// (untrusted hints)"); "" when the tool was not listed.
	Hints string
}

// Decisions in the audit log.
const (
	DecisionAllow       = "allow"
	DecisionDeny        = "deny"
	DecisionRateLimited = "rate-limited"
	DecisionTimeout     = "timeout"
	DecisionWithheld    = "result-withheld"
)

// Guard is the policy engine. Its methods are safe for concurrent use.
type Guard struct {
	o      Options
	log    *slog.Logger
	audit  *auditor
	schema *toolschema.Cache
	pin    *pinner // nil without Options.PinFile

	mu    sync.Mutex // guards tools, calls, lists, rate, own, ownSeq, listens, latestMeta
	tools map[string]*tool
	calls map[key]*call
	lists map[key]bool
	rate  map[string][]time.Time
	// own are the guard's own tools/list requests in flight, with the
	// names listed by their earlier pages.
	own    map[key]*ownList
	ownSeq int
	// listens are the per-request _meta of the client's open
	// subscriptions/listen requests (2026-07-28), latestMeta that of its
	// latest request of that version.
	listens    map[key]json.RawMessage
	latestMeta json.RawMessage

	prompt chan struct{} // one question at a time on the terminal
}

type key struct {
	session string
	id      jsonrpc.ID
}

type call struct {
	tool    string
	args    json.RawMessage
	expired bool
}

// New returns a guard; it checks the patterns.
func New(opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = livelog.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redact == nil {
		o.Redact = cassettes.DefaultRedactRules()
	}
	for _, list := range [][]string{o.Allow, o.Deny, o.Confirm} {
		if err := checkGlobs(list); err != nil {
			return nil, err
		}
	}
	for _, rl := range o.RateLimits {
		if err := checkGlobs([]string{rl.Tool}); err != nil {
			return nil, err
		}
	}
	a, err := newAuditor(o.Audit, o.Redact, o.Now)
	if err != nil {
		return nil, err
	}
	g := &Guard{
		o: o, log: o.Logger, audit: a, schema: toolschema.NewCache("output"),
		tools: map[string]*tool{}, calls: map[key]*call{}, lists: map[key]bool{}, rate: map[string][]time.Time{},
		own: map[key]*ownList{}, listens: map[key]json.RawMessage{}, prompt: make(chan struct{}, 1),
	}
	if o.PinFile != "" {
		if g.pin, err = newPinner(o.PinFile, o.PinUpdate, o.PinSource); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// FromClient decides about one message from the client. session keeps
// request ids of different clients apart ("" on stdio).
func (g *Guard) FromClient(session string, msg []byte) Verdict {
	if isBatch(msg) {
		return g.batch(msg, func(m []byte) Verdict { return g.fromClient(session, m, true) })
	}
	return g.fromClient(session, msg, false)
}

// FromServer decides about one message from the server.
func (g *Guard) FromServer(session string, msg []byte) Verdict {
	if isBatch(msg) {
		return g.batch(msg, func(m []byte) Verdict { return g.fromServer(session, m) })
	}
	return g.fromServer(session, msg)
}

func (g *Guard) fromClient(session string, raw []byte, inBatch bool) Verdict {
	msg, err := jsonrpc.Parse(raw)
	if err != nil || msg.Kind() != jsonrpc.KindRequest {
		return Verdict{Forward: raw}
	}
	k := key{session, msg.ID}
	g.noteMeta(k, msg)
	switch msg.Method {
	case "tools/list":
		g.mu.Lock()
		g.lists[k] = true
		g.mu.Unlock()
		return Verdict{Forward: raw}
	case "tools/call":
	default:
		return Verdict{Forward: raw}
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || p.Name == "" {
		return Verdict{Forward: raw} // the server says what is wrong
	}
	if p.Arguments == nil {
		p.Arguments = json.RawMessage("{}")
	}
	ev := event{Session: session, ID: msg.ID, Tool: p.Name, args: p.Arguments, raw: raw}
	if by := g.refused(p.Name); by != "" {
		g.decide(ev, DecisionDeny, by, "the tool is not allowed; answered as an unknown tool")
		return Verdict{Reply: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %s", p.Name)})}
	}
	if g.pin != nil {
		if v := g.pinCall(k, ev, inBatch, func(ctx context.Context) Verdict {
			v := g.policyCall(k, ev, inBatch)
			if v.Hold != nil {
				return v.Hold(ctx)
			}
			return v
		}); v != nil {
			return *v
		}
	}
	return g.policyCall(k, ev, inBatch)
}

// policyCall decides about a call that the tool lists and the pin allow:
// its rate limit, its confirmation.
func (g *Guard) policyCall(k key, ev event, inBatch bool) Verdict {
	if by, wait := g.limited(ev.Tool); by != "" {
		g.decide(ev, DecisionRateLimited, by, fmt.Sprintf("retry in %s", wait))
		return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q was refused: its rate limit (%s) is reached; retry in %s", ev.Tool, by, wait))}
	}
	if by := g.needsConfirm(ev.Tool); by != "" {
		if inBatch {
			g.decide(ev, DecisionDeny, by, "a call in a batch cannot be confirmed")
			return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q needs a person's confirmation, which a call in a batch cannot get; it was not made", ev.Tool))}
		}
		g.log.Warn(fmt.Sprintf("⚑ tools/call %s %s — waiting for confirmation (%s)", ev.Tool, short(ev.args, 120), by),
			slog.String("tool", ev.Tool), slog.String("guard", "hold"))
		return Verdict{Hold: func(ctx context.Context) Verdict { return g.confirm(ctx, k, ev, by) }}
	}
	g.decide(ev, DecisionAllow, "policy", "")
	return g.forwardCall(k, ev, ev.raw)
}

// forwardCall passes a call on and starts its clock.
func (g *Guard) forwardCall(k key, ev event, raw []byte) Verdict {
	g.mu.Lock()
	g.calls[k] = &call{tool: ev.Tool, args: ev.args}
	g.mu.Unlock()
	v := Verdict{Forward: raw}
	if g.o.CallTimeout > 0 {
		v.Timeout = g.o.CallTimeout
		v.Expire = func() ([]byte, [][]byte) {
			c, s := g.expire(k, ev)
			if s == nil {
				return c, nil
			}
			return c, [][]byte{s}
		}
	}
	return v
}

// confirm asks the person (one question at a time) and decides.
func (g *Guard) confirm(ctx context.Context, k key, ev event, by string) Verdict {
	if g.o.Prompter == nil {
		g.log.Warn(fmt.Sprintf("guard: tools/call %s needs confirmation (%s) but there is no terminal to ask on: denied", ev.Tool, by))
		g.decide(ev, DecisionDeny, "no terminal", "confirmation needed ("+by+") and no terminal to ask on")
		return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q needs a person's confirmation and there is no terminal to ask on; it was denied and not made", ev.Tool))}
	}
	c := Call{Tool: ev.Tool, Arguments: ev.args, Hints: g.hints(ev.Tool)}
	ok, err := g.ask(ctx, func(ctx context.Context) (bool, error) { return g.o.Prompter.Confirm(ctx, c) })
	if errors.Is(err, ErrConfirmTimeout) {
		d := g.o.ConfirmTimeout
		g.decide(ev, DecisionDeny, "timeout", fmt.Sprintf("no answer at the terminal within %s (--confirm-timeout)", d))
		return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the confirmation of the call to tool %q timed out: no one answered at the terminal within %s; it was denied and not made", ev.Tool, d))}
	}
	if err != nil || !ok {
		why := "declined at the terminal"
		who := "person"
		if err != nil {
			why, who = "not confirmed: "+err.Error(), "prompt"
		}
		g.decide(ev, DecisionDeny, who, why)
		return Verdict{Reply: toolError(k.id, fmt.Sprintf("mcpmock guard: the call to tool %q was %s; it was not made", ev.Tool, why))}
	}
	g.decide(ev, DecisionAllow, "person", "allowed at the terminal")
	return g.forwardCall(k, ev, ev.raw)
}

// ErrConfirmTimeout is the cause of the context a Prompter is given when
// Options.ConfirmTimeout passes before the person answers.
var ErrConfirmTimeout = errors.New("no answer within --confirm-timeout")

// ask puts one question at a time to the person, within ConfirmTimeout
// (the wait for an earlier question included). It returns ErrConfirmTimeout
// when the time is up.
func (g *Guard) ask(ctx context.Context, question func(context.Context) (bool, error)) (bool, error) {
	if g.o.ConfirmTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, g.o.ConfirmTimeout, ErrConfirmTimeout)
		defer cancel()
	}
	select {
	case g.prompt <- struct{}{}:
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
	defer func() { <-g.prompt }()
	ok, err := question(ctx)
	if err != nil && errors.Is(context.Cause(ctx), ErrConfirmTimeout) {
		return false, ErrConfirmTimeout
	}
	return ok, err
}

// expire answers a call the server did not answer in time.
func (g *Guard) expire(k key, ev event) (toClient, toServer []byte) {
	g.mu.Lock()
	c := g.calls[k]
	if c == nil || c.expired {
		g.mu.Unlock()
		return nil, nil
	}
	c.expired = true
	g.mu.Unlock()
	d := g.o.CallTimeout
	g.decide(ev, DecisionTimeout, "--call-timeout", fmt.Sprintf("no answer within %s; the server was sent notifications/cancelled", d))
	toClient = toolError(k.id, fmt.Sprintf("mcpmock guard: tool %q did not answer within %s; the call was cancelled", ev.Tool, d))
	toServer = notification("notifications/cancelled", map[string]any{
		"requestId": json.RawMessage(k.id),
		"reason":    fmt.Sprintf("mcpmock guard: no answer within %s", d),
	})
	return toClient, toServer
}

func (g *Guard) fromServer(session string, raw []byte) Verdict {
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		return Verdict{Forward: raw}
	}
	switch msg.Kind() {
	case jsonrpc.KindNotification:
		if msg.Method == "notifications/tools/list_changed" {
			g.log.Info("⚑ the server's tools changed: the guard lists them itself")
			return Verdict{Forward: raw, ToServer: g.listOwn(session, &ownList{seen: map[string]bool{}, meta: g.metaFor(session, msg)}, "")}
		}
		return Verdict{Forward: raw}
	case jsonrpc.KindResponse:
	default:
		return Verdict{Forward: raw}
	}
	if g.pin != nil && msg.Result != nil {
		g.noteServer(msg.Result)
	}
	k := key{session, msg.ID}
	g.mu.Lock()
	ol := g.own[k]
	delete(g.own, k)
	delete(g.listens, k)
	g.mu.Unlock()
	if ol != nil {
		return g.ownListed(session, msg, ol)
	}
	g.mu.Lock()
	isList := g.lists[k]
	delete(g.lists, k)
	c := g.calls[k]
	delete(g.calls, k)
	g.mu.Unlock()
	switch {
	case isList && msg.Result != nil:
		return g.listed(msg, raw)
	case c != nil && c.expired:
		g.log.Warn(fmt.Sprintf("guard: the late answer of tool %s (id %s) was dropped: the client was already told it timed out", c.tool, msg.ID))
		return Verdict{}
	case c != nil && msg.Result != nil:
		return Verdict{Forward: g.checkResult(session, msg, c, raw)}
	}
	return Verdict{Forward: raw}
}

// batch applies f to each message of a JSON-RPC batch.
func (g *Guard) batch(raw []byte, f func([]byte) Verdict) Verdict {
	elems, _, err := jsonrpc.SplitBatch(raw)
	if err != nil {
		return Verdict{Forward: raw}
	}
	var fwd, reply, toServer [][]byte
	var clocks []Verdict
	changed := false
	for _, e := range elems {
		v := f(e)
		if v.Forward != nil {
			fwd = append(fwd, v.Forward)
		}
		if v.Reply != nil {
			reply = append(reply, v.Reply)
		}
		if v.ToServer != nil {
			toServer = append(toServer, v.ToServer)
		}
		if v.Forward != nil && v.Timeout > 0 && v.Expire != nil {
			clocks = append(clocks, v)
		}
		if v.Forward == nil || string(v.Forward) != string(e) {
			changed = true
		}
	}
	var out Verdict
	if !changed {
		out.Forward = raw
	} else if len(fwd) > 0 {
		out.Forward = jsonrpc.JoinBatch(fwd)
	}
	if len(reply) > 0 {
		out.Reply = jsonrpc.JoinBatch(reply)
	}
	out.ToServer = joinMessages(toServer)
	if len(clocks) > 0 && out.Forward != nil {
		out.Timeout, out.Expire = batchClock(clocks)
	}
	return out
}

// batchClock is one clock for the calls of a batch, which the server
// answers as a whole: it runs out at the earliest of their deadlines (all
// are CallTimeout), and then every call that the server has not answered
// yet is answered with its timeout error (together, as one batch) and
// cancelled upstream (one notifications/cancelled each: a batch of
// notifications trips the go-sdk, which takes their missing ids for
// duplicates). A call answered in time keeps its answer; a late answer is
// dropped, as for a call alone.
func batchClock(calls []Verdict) (time.Duration, func() (toClient []byte, toServer [][]byte)) {
	d := calls[0].Timeout
	for _, c := range calls[1:] {
		d = min(d, c.Timeout)
	}
	return d, func() (toClient []byte, toServer [][]byte) {
		var cs [][]byte
		for _, v := range calls {
			c, s := v.Expire()
			if c != nil {
				cs = append(cs, c)
			}
			toServer = append(toServer, s...)
		}
		if len(cs) > 0 {
			toClient = jsonrpc.JoinBatch(cs)
		}
		return toClient, toServer
	}
}

// joinMessages returns nil for none, the message for one, else a batch.
func joinMessages(msgs [][]byte) []byte {
	switch len(msgs) {
	case 0:
		return nil
	case 1:
		return msgs[0]
	}
	return jsonrpc.JoinBatch(msgs)
}

func isBatch(b []byte) bool {
	s := strings.TrimSpace(string(b[:min(len(b), 16)]))
	return strings.HasPrefix(s, "[")
}

// toolError is a tools/call result that reports a failure to the model.
func toolError(id jsonrpc.ID, text string) []byte {
	return jsonrpc.Response(id, mustJSON(map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text}},
		"isError": true,
	}))
}

func notification(method string, params any) []byte {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func short(raw []byte, max int) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
