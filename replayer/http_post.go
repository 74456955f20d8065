package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// incoming is one parsed message of a POST body.
type incoming struct {
	raw []byte
	msg *jsonrpc.Message
	p   mcp.RequestParams // read of msg's params once, for every check
}

// readPOST checks a POST's headers and reads its messages, appended to
// msgs. It answers the request itself and returns ok false on any error.
func (h *HTTPHandler) readPOST(w http.ResponseWriter, r *http.Request, msgs []incoming) (_ []incoming, batch, ok bool) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Unsupported Media Type: Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return nil, false, false
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false, false
		}
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false, false
	}
	if !jsonrpc.Valid(body) { // encoding/json's answer, in a fraction of its time
		livelog.Raw(h.e.opts.Logger, livelog.ToServer, body, "parse error")
		h.e.stats.messages.Add(1)
		writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeParseError, "Parse error: the body is not JSON", nil)
		return nil, false, false
	}
	var one [1]json.RawMessage // a single message is split into it, in place
	elems, batch, err := jsonrpc.SplitBatchTo(one[:0], body)
	if err == nil && batch && len(elems) == 0 {
		err = errors.New("empty batch")
	}
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		return nil, false, false
	}
	for _, el := range elems {
		msg := postMessages.Get().(*jsonrpc.Message)
		err := jsonrpc.ParseViewInto(msg, el)
		if err != nil {
			*msg = jsonrpc.Message{}
			postMessages.Put(msg)
			msg, err = jsonrpc.Parse(el) // what it reports, as before
		}
		if err != nil {
			h.e.stats.messages.Add(1)
			livelog.Raw(h.e.opts.Logger, livelog.ToServer, el, "invalid message")
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				writeRPCError(w, http.StatusBadRequest, invalidID(el, msg), rpcErr.Code, rpcErr.Message, nil)
			} else {
				writeRPCError(w, http.StatusBadRequest, "", jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
			}
			return nil, false, false
		}
		msgs = append(msgs, incoming{raw: el, msg: msg, p: mcp.ReadParams(msg.Params)})
	}
	return msgs, batch, true
}

// readBody reads a POST body within max bytes (any size for a negative
// max): the bytes that the guard in
// front (internal/httpguard) has read already, as they are, or else the
// body itself.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if b, ok := httpguard.Bytes(r); ok && (max < 0 || int64(len(b)) <= max) {
		return b, nil
	}
	if max < 0 {
		return io.ReadAll(r.Body)
	}
	if r.ContentLength > max {
		// Refused before it is read: the client need not send it.
		return nil, &http.MaxBytesError{Limit: max}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

func (h *HTTPHandler) servePOST(w http.ResponseWriter, r *http.Request, modern bool) {
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	if !jsonOK || !streamOK {
		http.Error(w, "Not Acceptable: Accept must contain both 'application/json' and 'text/event-stream'", http.StatusNotAcceptable)
		return
	}
	var one [1]incoming // a POST's messages: most often one
	msgs, batch, ok := h.readPOST(w, r, one[:0])
	if !ok {
		return
	}
	if !modern {
		for _, m := range msgs {
			if m.msg.Kind() == jsonrpc.KindRequest && m.p.ProtocolVersion() != "" {
				modern = true
			}
		}
	}
	var free bool
	switch {
	case modern:
		free = h.serveStateless(w, r, msgs, batch)
	case batch && !mcp.Batches(r.Header.Get(mcp.HeaderProtocolVersion)):
		http.Error(w, "Bad Request: JSON-RPC batches are not supported in 2025-06-18 and later", http.StatusBadRequest)
	case h.noSessions:
		free = h.serveWithoutSession(w, r, msgs, batch) // protocol_sessionless.go
	default:
		free = h.serveInSession(w, r, msgs, batch)
	}
	if free && h.e.keepsNothing() {
		releasePOST(r, msgs)
	}
}

// serveInSession answers a POST of the stateful era within its session,
// which an initialize opens; free is answer's.
func (h *HTTPHandler) serveInSession(w http.ResponseWriter, r *http.Request, msgs []incoming, batch bool) (free bool) {
	var hs *httpSession
	created, ok := false, false
	if r.Header.Get(mcp.HeaderSessionID) == "" && slices.ContainsFunc(msgs, func(m incoming) bool { return m.msg.Method == "initialize" && m.msg.Kind() == jsonrpc.KindRequest }) {
		if hs, ok = h.newSession(false); !ok {
			http.Error(w, "Service Unavailable: the replay server is closing", http.StatusServiceUnavailable)
			return false
		}
		created = true
	} else if hs = h.lookup(w, r); hs == nil {
		return false
	}
	return h.answer(w, r, hs.s, hs, msgs, batch, func(hd http.Header) {
		if created {
			hd.Set(mcp.HeaderSessionID, hs.id)
		}
	})
}

// postMessages are the parses of a POST's messages (readPOST): each is a
// view of the body, its id too, and is used again for a later POST when
// the session kept nothing of it (releasePOST).
var postMessages = sync.Pool{New: func() any { return new(jsonrpc.Message) }}

// releasePOST hands a POST's messages and its body back for later POSTs,
// once the handler is done with them: every message was a request
// answered at once from the cassette, as recorded, in a JSON answer
// (answer's free), on an engine that hands messages to no one. This is
// the stdio reader's borrow (serve.go) for HTTP, and poisonFreed has the
// package's tests read zeros where anything kept a part of them.
func releasePOST(r *http.Request, msgs []incoming) {
	for _, m := range msgs {
		if poisonFreed {
			clear(m.raw)
			*m.msg = jsonrpc.Message{Method: "poisoned", Raw: m.raw, Params: m.raw}
		} else {
			*m.msg = jsonrpc.Message{}
		}
		postMessages.Put(m.msg)
	}
	httpguard.Release(r)
}

// answer handles the messages of one POST within a session and writes the
// HTTP answer: 202 when there is no request, else the responses as JSON or
// as an event stream. hs is nil for stateless traffic. free reports that
// the session keeps nothing of the messages now that answer has returned:
// each was a request answered at once from the cassette, as recorded (the
// stdio reader's free, serve.go), and the answer was JSON.
func (h *HTTPHandler) answer(w http.ResponseWriter, r *http.Request, s *session, hs *httpSession, msgs []incoming, batch bool, headers func(http.Header)) (free bool) {
	start := time.Now()
	var table *inflight
	if hs != nil {
		table = &hs.calls
	}
	var one [1]postCall // a POST's requests: most often one
	calls := one[:0]
	for _, m := range msgs {
		s.knowParams(m.msg.Params, m.p)
		if plan := s.receive(m.msg, table); plan != nil {
			calls = append(calls, postCall{msg: m.msg, plan: plan})
		}
	}
	// Every plan is carried out before answer returns (a resumable stream
	// whose client went away goes on here, detached from the request). The
	// messages were written or copied, unless a resumable stream keeps them
	// for a client that comes back.
	resumable := false
	defer func() {
		for _, c := range calls {
			if resumable {
				c.plan.release()
			} else {
				c.plan.releaseAll()
			}
		}
	}()
	headers(w.Header())
	if len(calls) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sse, eventIDs := h.form(calls, batch)
	// The notifications that the recording has on the GET stream after a
	// call go on the call's own stream, before its response, when the
	// client has no GET stream open: as a server that sends on the stream
	// it has (mcp-go's does), and a client that never opens one (mcp-go's)
	// would otherwise never see them.
	onPOST := hs != nil && !hs.sse && !hs.ephemeral && !hs.streaming() && onGETStream(calls)
	sse = sse || onPOST
	// (A scripted status answers alone, whatever the form.)
	sse = sse && (batch || calls[0].plan.httpFault() == nil)
	if onPOST && sse {
		for i := range calls {
			calls[i].plan = onPOSTStream(calls[i].plan)
		}
	}
	// A resumable stream (http_resume.go) goes on when the client goes
	// away; other answers end with it.
	resumable = sse && hs != nil && !hs.ephemeral && len(eventIDs) > 0
	base := r.Context()
	if resumable {
		base = context.WithoutCancel(base)
	}
	for _, c := range calls {
		// Under base itself, not a context made from it, which ends a
		// moment after it: the explanation stops as the client leaves.
		s.explainMiss(base, c.msg, c.plan)
	}
	// Each request that can wait can be cancelled alone
	// (notifications/cancelled); one that cannot is carried out before
	// anything could cancel it, under the request's own context.
	added := 0 // calls[:added] are in table
	defer func() {
		for _, c := range calls[:added] {
			table.forget(c.msg.ID, c.cancel)
		}
	}()
	for i := range calls {
		calls[i].ctx = base
		if !calls[i].plan.immediate() {
			var ctx context.Context
			ctx, calls[i].cancel = context.WithCancelCause(base)
			defer calls[i].cancel(nil)
			calls[i].ctx = ctx
		}
		if table != nil {
			if !table.add(calls[i].msg.ID, calls[i].cancel) {
				http.Error(w, "Not Found: the session ended", http.StatusNotFound)
				return
			}
			added++
		}
	}
	post := postOutlet{later: hs.laterOutlet(), start: start, onPOST: onPOST && sse}
	if post.later != nil {
		post.early = hs.pushWrittenTo
	}
	if hs != nil && !hs.sse && batchesAllowed(r) {
		post.join = true // recorded server batches go as one event (protocol_batch.go)
	}
	if !sse {
		h.answerJSON(w, r, s, calls, batch, post, hs == nil)
		return len(calls) == len(msgs) && !slices.ContainsFunc(calls, func(c postCall) bool { return !c.answeredAsRecorded() })
	}
	h.answerSSE(w, s, hs, calls, eventIDs, resumable, post)
	return false
}

// answeredAsRecorded reports whether c was a request answered at once
// from the cassette, as recorded.
func (c postCall) answeredAsRecorded() bool {
	p := c.plan
	return c.msg.Kind() == jsonrpc.KindRequest && p.immediate() && p.Interaction > 0 && p.Miss == nil && p.Scripted == ""
}

// onGETStream reports whether a plan of calls sends a notification that
// the recording has on the GET stream.
func onGETStream(calls []postCall) bool {
	for _, c := range calls {
		for i := range c.plan.Steps {
			if onGETNotification(c.plan.Steps, i) {
				return true
			}
		}
	}
	return false
}

// onGETNotification reports whether steps[i] sends a notification that the
// recording has on the GET stream (a server request is followed by the wait
// for its reply).
func onGETNotification(steps []step, i int) bool {
	st := steps[i]
	return st.Kind == stepSend && st.unsolicited && st.get && !(i+1 < len(steps) && steps[i+1].Kind == stepAwaitReply)
}

// onPOSTStream is plan with the notifications that the recording has on
// the GET stream after the response moved before it, for a session with no
// GET stream open: the call's own stream is the only one the client reads.
// They follow the call, as they did live; a server that sends on the stream
// it has would have sent them there, before the response.
func onPOSTStream(plan *answerPlan) *answerPlan {
	resp := slices.IndexFunc(plan.Steps, func(st step) bool { return st.Kind == stepSend && st.Response })
	if resp < 0 {
		return plan
	}
	var moved, rest []step
	for i := resp + 1; i < len(plan.Steps); i++ {
		if onGETNotification(plan.Steps, i) {
			moved = append(moved, plan.Steps[i])
		} else {
			rest = append(rest, plan.Steps[i])
		}
	}
	if len(moved) == 0 {
		return plan
	}
	out := *plan
	out.Steps = slices.Concat(plan.Steps[:resp], moved, plan.Steps[resp:resp+1], rest)
	return &out
}

// postCall is one request of a POST, its plan and its context, with the
// context's cancel when the plan can wait.
type postCall struct {
	msg    *jsonrpc.Message
	plan   *answerPlan
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// form says whether the answer to calls is an event stream, and with which
// recorded event ids: JSON when every answer is the response alone (and
// the options or the recording do not ask for a stream).
func (h *HTTPHandler) form(calls []postCall, batch bool) (sse bool, eventIDs []string) {
	for _, c := range calls {
		if c.plan.streams() {
			sse = true
		}
		rec := h.e.recordedHTTP(c.plan)
		switch {
		case h.opts.Form == "sse":
			sse = true
		case h.opts.Form == "" && rec != nil && rec.Form == "sse":
			sse = true
		}
		if rec != nil && !batch {
			eventIDs = rec.EventIDs
		}
	}
	return sse, eventIDs
}

// answerJSON answers calls with a JSON body: the response, or the array of
// a batch's responses. A scripted HTTP status takes its place.
func (h *HTTPHandler) answerJSON(w http.ResponseWriter, r *http.Request, s *session, calls []postCall, batch bool, post postOutlet, stateless bool) {
	var outs []postOutlet
	if len(calls) == 1 && calls[0].plan.immediate() {
		// It sends its messages and is done: its outlet is used again.
		one := pooledOutlet(post)
		defer putOutlet(one)
		outs = one[:]
	} else {
		outs = make([]postOutlet, len(calls))
	}
	for i := range outs {
		outs[i] = post
		outs[i].keep = true
		if !batch {
			outs[i].fault = w
		}
	}
	if len(calls) == 1 { // on this goroutine, with no func made for it
		s.carry(calls[0].ctx, calls[0].msg, calls[0].plan, post.start, &outs[0])
	} else {
		batch := slices.Clone(calls) // the goroutines' own: calls may stay on the caller's stack
		eachCall(len(batch), func(i int) { s.carry(batch[i].ctx, batch[i].msg, batch[i].plan, post.start, &outs[i]) })
	}
	if r.Context().Err() != nil || outs[0].faulted {
		return // the client went away, or the status was written
	}
	for i := range outs {
		if outs[i].aborted {
			abortHTTP(w)
			return
		}
	}
	if batch {
		var out [][]byte
		for _, o := range outs {
			if o.response != nil {
				out = append(out, o.response)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(jsonrpc.JoinBatch(out))
		return
	}
	plan, response := calls[0].plan, outs[0].response
	if response == nil {
		// Cancelled by the client before the response: nothing to say.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header()["Content-Type"] = jsonType
	status := h.e.statusOf(plan, response, stateless)
	if rec := h.e.recordedHTTP(plan); rec != nil && status >= 400 {
		for _, k := range []string{"Retry-After", "WWW-Authenticate"} {
			if v, ok := rec.ResponseHeaders[k]; ok {
				w.Header().Set(k, v)
			}
		}
	}
	w.WriteHeader(status)
	if t := plan.Trickle; t > 0 {
		trickleWrite(calls[0].ctx, w, response, t)
		return
	}
	w.Write(response)
}

// answerSSE answers calls with an event stream, each request's messages
// as they come. A resumable stream keeps its events for a client that
// comes back with Last-Event-ID.
func (h *HTTPHandler) answerSSE(w http.ResponseWriter, s *session, hs *httpSession, calls []postCall, eventIDs []string, resumable bool, post postOutlet) {
	// An answer that starts with a message sends the stream's headers
	// with it; one that starts by waiting opens the stream first.
	sw := openSSE(w, eventIDs, len(calls) > 1 || !startsWithSend(calls[0].plan))
	send := func(msg []byte) error { return sw.event("message", msg) }
	// The response ends the stream: when nothing comes after it, it goes
	// with the end of the HTTP response.
	sendLast := send
	if len(calls) == 1 && endsWithResponse(calls[0].plan) {
		sendLast = func(msg []byte) error { return sw.last("message", msg) }
	}
	if resumable {
		var end func()
		send, end = hs.resumablePOST(sw, eventIDs)
		sendLast = send
		defer end()
		post.detached = true
	}
	post.withResponse = true
	post.deliver = func(msg []byte, response bool) error {
		if response {
			return sendLast(msg)
		}
		return send(msg)
	}
	carry := func(c *postCall) {
		o := post
		s.carry(c.ctx, c.msg, c.plan, post.start, &o)
		if o.aborted {
			h.e.opts.Logger.Warn("✗ scripted fault: event stream cut (" + c.plan.Scripted + ")")
		}
	}
	if len(calls) == 1 {
		carry(&calls[0])
		return
	}
	batch := slices.Clone(calls) // the goroutines' own: calls may stay on the caller's stack
	eachCall(len(batch), func(i int) { carry(&batch[i]) })
}

// jsonType is the Content-Type of a JSON answer, one slice for all: no
// one changes a header's values in place.
var jsonType = []string{"application/json"}

// postOutlets are the outlets of JSON answers to one request whose plan is
// immediate (answerJSON): carrying such a plan out only sends its
// messages, and nothing keeps the outlet once it is done.
var postOutlets = sync.Pool{New: func() any { return new([1]postOutlet) }}

// pooledOutlet returns o in an outlet of postOutlets, for putOutlet to
// give back once the plan is carried out.
func pooledOutlet(o postOutlet) *[1]postOutlet {
	one := postOutlets.Get().(*[1]postOutlet)
	one[0] = o
	return one
}

// putOutlet gives back an outlet of pooledOutlet, zeroed: what it held
// goes to no later plan.
func putOutlet(one *[1]postOutlet) {
	one[0] = postOutlet{}
	postOutlets.Put(one)
}

// postOutlet carries a plan out into the answer of a POST (executor.go).
type postOutlet struct {
	start   time.Time
	deliver func(msg []byte, response bool) error // the POST's answer
	later   func([]byte)                          // the GET stream; nil drops
	// early, when set, takes what goes on the GET stream before the
	// answer (pushWritten); answered says the answer went. onPOST sends
	// it on the POST's own event stream instead (no GET stream is open).
	early    func([]byte)
	answered bool
	onPOST   bool
	// join and withResponse say how recorded server batches go; detached
	// marks a resumable stream, which goes on when the client goes away.
	join, withResponse, detached bool
	// fault, when set, takes a scripted HTTP status (faulted records that
	// it did); aborted records a scripted cut, close or exit.
	fault   http.ResponseWriter
	faulted bool
	aborted bool
	// keep says that the answer is JSON: the response is kept in
	// response, and deliver is not called.
	keep     bool
	response []byte
}

// answer delivers a message of the POST's answer.
func (o *postOutlet) answer(msg []byte, response bool) error {
	if o.keep {
		o.response = msg
		return nil
	}
	return o.deliver(msg, response)
}

func (o *postOutlet) send(m outMessage) error {
	switch {
	case m.later && !o.answered && o.onPOST:
		return o.answer(m.raw, false)
	case m.later && !o.answered && o.early != nil:
		o.early(m.raw)
	case m.later:
		if o.later != nil {
			o.later(m.raw)
		}
	default:
		o.answered = o.answered || m.response
		return o.answer(m.raw, m.response)
	}
	return nil
}

func (o *postOutlet) end(*step) { o.aborted = true }

func (o *postOutlet) status() func(*step) {
	if o.fault == nil {
		return nil
	}
	return func(st *step) {
		writeStatus(o.fault, st)
		o.faulted = true
	}
}

func (o *postOutlet) batches() (join, withResponse bool) { return o.join, o.withResponse }

// outlives: a resumable stream goes on when the client goes away, and so
// does what follows the answer, which goes on the GET stream (send): a
// client that closes the POST's stream once it has read the answer (mcp-go's
// does) would otherwise lose the notifications recorded after it, whenever
// it closed before the replay reached them.
func (o *postOutlet) outlives() bool { return o.detached || o.answered && o.later != nil }

// eachCall runs run(0) to run(n-1) at the same time and waits for them:
// the answers to the requests of a batch go on side by side. One request
// (the common case) runs on the caller's goroutine.
func eachCall(n int, run func(i int)) {
	if n == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	wg.Wait()
}

// endsWithResponse reports whether a plan's last step sends the response.
func endsWithResponse(p *answerPlan) bool {
	return len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Kind == stepSend && p.Steps[len(p.Steps)-1].Response
}

// startsWithSend reports whether a plan's first step sends a message.
func startsWithSend(p *answerPlan) bool {
	return len(p.Steps) > 0 && p.Steps[0].Kind == stepSend
}

// recordedHTTP returns how the interaction that answers a plan travelled
// over HTTP, or nil.
func (e *Engine) recordedHTTP(p *answerPlan) *cassettes.HTTP {
	if p.Interaction <= 0 || p.Interaction > len(e.cassette.Interactions) {
		return nil
	}
	return e.cassette.Interactions[p.Interaction-1].HTTP
}

// statusOf is the HTTP status of a JSON answer: the recorded one for a
// recorded error, 404 for method-not-found in the stateless era (as its
// transport requires), else 200.
func (e *Engine) statusOf(p *answerPlan, response []byte, stateless bool) int {
	if !bytes.Contains(response, []byte(`"error"`)) && bytes.IndexByte(response, '\\') < 0 {
		return http.StatusOK // no error member, not even an escaped name: no need to parse
	}
	m, err := jsonrpc.Parse(response)
	if err != nil || m.Error == nil {
		return http.StatusOK
	}
	if rec := e.recordedHTTP(p); rec != nil && rec.Status >= 400 && p.Miss == nil {
		return rec.Status
	}
	if stateless {
		switch m.Error.Code {
		case jsonrpc.CodeMethodNotFound:
			return http.StatusNotFound
		case CodeHeaderMismatch, CodeUnsupportedProtocolVersion, CodeMissingRequiredClientCapability:
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}
