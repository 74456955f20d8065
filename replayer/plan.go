package replayer

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// StepKind says what a plan step does.
type stepKind int

// The kinds of step.
const (
	// StepSend sends Message to the client.
	stepSend stepKind = iota
	// StepAwaitReply waits until the client replies to the server-to-client
	// request with id ReplyID (or the session's reply timeout passes).
	stepAwaitReply
	// StepDelay waits for Delay.
	stepDelay
	// StepClose closes the connection (a scripted fault).
	stepClose
	// StepExit ends a stdio server with ExitStatus (a scripted fault).
	stepExit
	// StepHTTPStatus answers the HTTP request with Status, Headers and
	// Body instead of the JSON-RPC answer (a scripted fault; front ends
	// without HTTP send Message, a JSON-RPC error saying so).
	stepHTTPStatus
	// StepListen keeps a subscriptions/listen request (id ReplyID) open,
	// carrying its notifications (Session.ServeListen), until the client
	// cancels it or the server ends it.
	stepListen
)

// Step is one action of a plan.
type step struct {
	Kind    stepKind
	Message []byte
	// Response marks the message that answers the client's request (the
	// one a front end puts into a batch answer, or into the HTTP response).
	Response bool
	replyID  jsonrpc.ID
	Delay    time.Duration
	// ExitStatus is the status of a StepExit.
	ExitStatus int
	// Status, Headers and Body are the HTTP answer of a StepHTTPStatus.
	Status  int
	Headers map[string]string
	Body    string
	// Notify marks a StepSend of a notification that belongs to no
	// request (a list change): front ends hand it to Session.Publish,
	// which routes it to where the client listens.
	Notify bool
	// Batch, when not 0, is the recorded server batch (2025-03-26) of a
	// StepSend: consecutive steps with the same Batch came as one JSON-RPC
	// array, and a stream front end sends them as one line.
	Batch int
	// completes is the live elicitationId that a StepSend of a
	// notifications/elicitation/complete completes (protocol_elicit.go).
	completes string
	// unsolicited marks a StepSend of a server message that belongs to no
	// request (recorded as its own interaction): HTTP sends it on the GET
	// stream. inline marks one that goes on the request's own stream all
	// the same (it came before the response, and not on the GET stream),
	// a list change or resources/updated among them.
	unsolicited, inline bool
	// get marks a server message of its own that the recording has on
	// the GET stream (http_post.go sends it on the POST's stream when the
	// client has no GET stream open).
	get bool
	// missAnswer marks the answer to a miss, which settle rewrites once
	// the miss is explained (explain.go).
	missAnswer bool

	// For a StepAwaitReply: the recorded reply, the server request's
	// method, and the live id of the client request it belongs to.
	expect json.RawMessage
	method string
	origID jsonrpc.ID
	// interaction, when not 0, is the 1-based cassette position of a
	// server-to-client request recorded as its own interaction (a
	// follow-up), which a ReplyMismatch names instead of the plan's.
	interaction int
}

// Plan is what a session does in answer to one client message.
type answerPlan struct {
	Steps []step
	// Interaction is the 1-based cassette position of the recorded
	// interaction that answers, 0 for none.
	Interaction int
	// Miss is set when the request matched nothing.
	Miss *Miss
	// Scripted names the scripted interaction that answered, if one did.
	Scripted string
	// CutAfter, when positive, ends the answer's stream (on stdio, the
	// connection) after that many messages.
	CutAfter int
	// Trickle, when positive, sends the answer at that many bytes a second.
	Trickle int

	rec    *recorded  // the recorded request that answers (the memos of its log lines)
	paced  bool       // the exchange is spaced by the recorded pacing
	waited int        // the leading delay steps already waited (afterDelays)
	own    *planOfOne // the storage the plan came from, for Release
}

// planOfOne is a plan with room for one step in the same allocation: most
// answers are one message.
type planOfOne struct {
	plan answerPlan
	step [1]step
	// msg is the memory of the plan's response, kept by ReleaseAll for
	// the next plan (Plan.responseBuf).
	msg []byte
}

// plans are released plans, for reuse: a replayed call then leaves almost
// no garbage, which on a large cassette would land on memory the process
// has never touched (page faults, see the README's Performance section).
var plans = sync.Pool{New: func() any { return new(planOfOne) }}

// newPlan returns an empty plan for the recorded interaction at pos.
func newPlan(pos int) *answerPlan {
	p := plans.Get().(*planOfOne)
	p.plan = answerPlan{Interaction: pos, Steps: p.step[:0], own: p}
	return &p.plan
}

// responseBuf returns memory to build the plan's response in: what a plan
// released with ReleaseAll left, or nil. keepResponse records what was
// built, so that ReleaseAll can hand it on.
func (p *answerPlan) responseBuf() []byte {
	if own := p.owned(); own != nil {
		return own.msg[:0]
	}
	return nil
}

func (p *answerPlan) keepResponse(msg []byte) {
	if own := p.owned(); own != nil {
		own.msg = msg
	}
}

// owned returns the plan's storage, nil for a plan not made by newPlan or
// for a copy of one.
func (p *answerPlan) owned() *planOfOne {
	if p.own == nil || &p.own.plan != p {
		return nil
	}
	return p.own
}

// maxKeptResponse is the largest response memory that ReleaseAll keeps.
const maxKeptResponse = 64 << 10

// Release hands the plan back for reuse: a front end calls it once it has
// carried the plan out, and must not use the plan or its Steps after. The
// messages of the steps stay the caller's. Releasing is optional: a plan
// that is not released is collected as usual.
func (p *answerPlan) release() { p.recycle(false) }

// ReleaseAll is Release for a front end that keeps none of the plan's
// messages either (it wrote or copied them): the memory of the response is
// reused too, and a replayed call then allocates nothing of its own.
func (p *answerPlan) releaseAll() { p.recycle(true) }

func (p *answerPlan) recycle(messages bool) {
	own := p.owned()
	if own == nil {
		return
	}
	var msg []byte
	if messages && cap(own.msg) <= maxKeptResponse {
		msg = own.msg[:0]
	}
	*own = planOfOne{msg: msg}
	plans.Put(own)
}

// addResponse adds the recorded response under the live id, built in the
// memory that ReleaseAll handed on.
func (p *answerPlan) addResponse(id jsonrpc.ID, recorded json.RawMessage, batch int) {
	start, end, ok := jsonrpc.IDSpan(recorded)
	p.addResponseAt(id, recorded, start, end, ok, batch)
}

// addResponseAt is addResponse with the span of the recorded id known
// (jsonrpc.IDSpan).
func (p *answerPlan) addResponseAt(id jsonrpc.ID, recorded json.RawMessage, start, end int, hasID bool, batch int) {
	out, err := jsonrpc.AppendWithIDAt(p.responseBuf(), recorded, start, end, hasID, id)
	if err == nil {
		p.keepResponse(out)
		p.Steps = append(p.Steps, step{Kind: stepSend, Response: true, Message: out, Batch: batch})
	}
}
