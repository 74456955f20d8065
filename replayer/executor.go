package replayer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// This file carries plans out, once for every front end: a front end takes
// a client message with Session.receive, runs the plan of a request with
// Session.carry through its outlet, and keeps only its framing — lines on
// stdio (serve.go), the session table, the JSON-or-stream choice and
// resumption on Streamable HTTP (http.go, http_resume.go), the event
// stream of HTTP+SSE (http_sse.go).

// outlet is a front end's side of carrying out a plan.
type outlet interface {
	// send sends one message. What answers the request, and what comes
	// before the answer as part of it, goes where the request's answer goes
	// (stdio: the stream; HTTP: the POST's response); a message with later
	// set — one that belongs to no request, or follows the answer — goes
	// where the session's server-initiated messages go (stdio: the stream;
	// Streamable HTTP: the GET stream). An error ends the plan.
	send(m outMessage) error
	// end ends the connection for a scripted fault: a StepClose (also the
	// cut of Plan.CutAfter) or a StepExit.
	end(st *step)
	// status returns what answers the request with the HTTP status of a
	// StepHTTPStatus, which then answers alone, after the plan's delays;
	// nil where there is no such answer (stdio, a batch), and the step's
	// Message (a JSON-RPC error saying so) is sent instead.
	status() func(st *step)
	// batches says whether a recorded server batch goes as one message (a
	// JSON-RPC array), and whether the response may be part of it.
	batches() (join, withResponse bool)
	// outlives reports whether the messages of a plan are still sent
	// after its context ends for any other reason than the client's
	// cancellation (stdio: when the session ends, the answers in flight are
	// written). Otherwise (HTTP: the client went away) the plan stops.
	outlives() bool
}

// outMessage is one message an outlet sends.
type outMessage struct {
	raw []byte
	// response marks the message that answers the request.
	response bool
	// later marks a message that belongs to no request or follows the
	// answer.
	later bool
	// trickle, when positive, sends the message at that many bytes a
	// second (a scripted fault).
	trickle int
}

// receive takes one client message and logs it: a reply to a
// server-to-client request is delivered, a notification handled (a
// cancellation cancels the request in calls, which may be nil), and the
// plan of a request returned; nil for the others. A miss in the plan is
// explained when it is carried out (carry).
func (s *session) receive(msg *jsonrpc.Message, calls *inflight) *answerPlan {
	log := s.e.opts.Logger
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		livelog.Message(log, livelog.ToServer, msg, 0, "")
		s.e.stats.messages.Add(1)
		s.deliver(msg)
		return nil
	case jsonrpc.KindNotification:
		livelog.Message(log, livelog.ToServer, msg, 0, "")
		s.plan(msg).release()
		if msg.Method == "notifications/cancelled" && calls != nil {
			calls.cancelled(msg)
		}
		return nil
	}
	plan := s.planFor(msg)
	if livelog.Off(log) {
		return plan
	}
	note := ""
	switch {
	case plan.Miss != nil:
		note = "no match"
	case plan.Scripted != "" && plan.Interaction > 0:
		note = "scripted: " + plan.Scripted + ", on the answer of #" + strconv.Itoa(plan.Interaction)
	case plan.Scripted != "":
		note = "scripted: " + plan.Scripted
	case plan.Interaction > 0:
		if livelog.KeepsNothing(log) {
			// The line is written before Message returns: the note is
			// made in a buffer used again, not a string of its own.
			buf := noteBufs.Get().(*[]byte)
			b := strconv.AppendInt(append((*buf)[:0], "replayed #"...), int64(plan.Interaction), 10)
			livelog.MessageLike(log, livelog.ToServer, msg, 0, unsafe.String(&b[0], len(b)), s.e.requestLineOf(plan.rec, msg))
			*buf = b
			noteBufs.Put(buf)
			return plan
		}
		note = "replayed #" + strconv.Itoa(plan.Interaction)
	}
	livelog.Message(log, livelog.ToServer, msg, 0, note)
	return plan
}

// noteBufs are the buffers that the notes of replayed calls are made in
// for a log that keeps nothing of them.
var noteBufs = sync.Pool{New: func() any { return new([]byte) }}

// invalid answers a client message that is no valid JSON-RPC message (raw,
// as far as Parse read it into msg, failed with err), on every transport,
// and logs and counts it: the error, and the id it goes under.
func (e *Engine) invalid(raw []byte, msg *jsonrpc.Message, err error) (jsonrpc.ID, *jsonrpc.Error) {
	e.stats.messages.Add(1)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && msg != nil {
		livelog.Raw(e.opts.Logger, livelog.ToServer, raw, rpcErr.Message)
		return invalidID(raw, msg), rpcErr
	}
	livelog.Raw(e.opts.Logger, livelog.ToServer, raw, "parse error")
	// JSON that is no message object (42, "x", null) is an invalid
	// request, not a parse error.
	if json.Valid(raw) {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + err.Error()}
	}
	return "", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + err.Error()}
}

// carry carries out the plan of the request msg, received at start,
// through out. A miss is explained first. When the client cancels the
// request, the rest of the plan is dropped; when ctx ends otherwise, waits
// end at once, and the rest is sent if out outlives it. It returns the
// steps it dropped because ctx ended or out refused a message.
func (s *session) carry(ctx context.Context, msg *jsonrpc.Message, plan *answerPlan, start time.Time, out outlet) (dropped []step) {
	e := s.e
	log := e.opts.Logger
	if plan.pending() {
		ectx := ctx
		if out.outlives() {
			ectx = context.WithoutCancel(ctx)
		}
		s.explainMiss(ectx, msg, plan)
	}
	if st := plan.httpFault(); st != nil {
		if write := out.status(); write != nil {
			s.delayed(ctx, plan.Steps)
			if ctx.Err() == nil {
				log.Warn(fmt.Sprintf("✗ scripted fault: HTTP %d (%s)", st.Status, plan.Scripted))
				write(st)
			}
			return nil
		}
	}
	join, withResponse := out.batches()
	join = join && plan.Trickle == 0 && plan.CutAfter == 0
	answered, sent := false, 0
	for i := plan.waited; i < len(plan.Steps); i++ {
		if ctx.Err() != nil && (context.Cause(ctx) == errCancelledByClient || !out.outlives()) {
			return plan.Steps[i:]
		}
		st := &plan.Steps[i]
		switch st.Kind {
		case stepSend, stepHTTPStatus:
			if s.withdrawn(*st) { // protocol_elicit.go
				continue
			}
			if st.Notify {
				// Where the client listens (Streamable HTTP: the GET
				// stream, unless inline), in its place among the
				// plan's messages.
				later := !st.inline || answered
				s.publishTo(st.Message, func(raw []byte) {
					e.logSend(raw, 0, "")
					out.send(outMessage{raw: raw, later: later})
				})
				continue
			}
			var out2 [2]outMessage
			msgs := out2[:1]
			if join {
				n := batchRun(plan.Steps[i:])
				msgs = s.batch(plan, plan.Steps[i:i+n], start, withResponse, out2[:0])
				i += n - 1
			}
			if len(msgs) == 1 && msgs[0].raw == nil {
				msgs[0] = outMessage{raw: st.Message, response: st.Response, later: st.unsolicited, trickle: plan.Trickle}
				s.logStep(plan, st, start, "")
			}
			for k := range msgs {
				m := &msgs[k]
				if m.later = m.later || answered; m.response {
					answered = true
				}
				if out.send(*m) != nil {
					return plan.Steps[i:]
				}
			}
			if sent++; plan.CutAfter > 0 && sent >= plan.CutAfter {
				log.Warn(fmt.Sprintf("✗ scripted fault: connection cut after %d messages (%s)", sent, plan.Scripted))
				out.end(&step{Kind: stepClose})
				return nil
			}
		case stepAwaitReply:
			reply, err := s.awaitReply(ctx, st.replyID)
			if err != nil && ctx.Err() == nil {
				log.Warn(err.Error())
			}
			if ctx.Err() == nil {
				if fail := s.checkReply(plan, *st, reply); fail != nil {
					e.logSend(fail, time.Since(start), "")
					out.send(outMessage{raw: fail, response: true})
					return nil
				}
			}
		case stepListen:
			if !s.serveListen(ctx, st.replyID, func(msg []byte) error { return out.send(outMessage{raw: msg}) }) {
				return nil
			}
		case stepDelay:
			sleep(ctx, st.Delay)
		case stepClose:
			log.Warn("✗ scripted fault: connection closed (" + plan.Scripted + ")")
			out.end(st)
			return nil
		case stepExit:
			log.Warn(fmt.Sprintf("✗ scripted fault: server exits with status %d (%s)", st.ExitStatus, plan.Scripted))
			out.end(st)
			return nil
		}
	}
	return nil
}

// explainMiss explains the plan's miss under ctx (settle, explain.go) and
// logs the explanation.
func (s *session) explainMiss(ctx context.Context, msg *jsonrpc.Message, plan *answerPlan) {
	if !plan.pending() {
		return
	}
	s.settle(ctx, msg, plan)
	// The id ties the explanation to its request in the web view (--ui).
	s.e.opts.Logger.Warn(strings.TrimPrefix(plan.Miss.Report(), "mcpmock: "), "id", string(msg.ID))
}

// logStep logs a message that a plan sends.
func (s *session) logStep(plan *answerPlan, st *step, start time.Time, note string) {
	var lat time.Duration
	if st.Response {
		lat = time.Since(start)
		if plan.Scripted != "" && note == "" {
			note = "scripted: " + plan.Scripted
		}
	}
	var memo *livelog.Memo
	var id jsonrpc.ID
	if st.Response {
		memo, id = s.e.responseLineOf(plan.rec, st.Message)
	}
	s.e.logSendLike(st.Message, lat, note, memo, id)
}

// batch logs the steps of run, which the recorded server sent as one batch,
// and appends to msgs what goes out for them: one message when run has one
// step (left empty, for the caller to fill); else the batch as one JSON-RPC
// array, with the response in it when withResponse, or else the response
// alone and then the rest as one array.
func (s *session) batch(plan *answerPlan, run []step, start time.Time, withResponse bool, msgs []outMessage) []outMessage {
	if len(run) == 1 {
		return append(msgs, outMessage{})
	}
	var rest [][]byte
	response := false
	for i := range run {
		st := &run[i]
		s.logStep(plan, st, start, "in a batch, as recorded")
		if st.Response && !withResponse {
			msgs = append(msgs, outMessage{raw: st.Message, response: true})
			continue
		}
		response = response || st.Response
		rest = append(rest, st.Message)
	}
	switch len(rest) {
	case 0:
	case 1:
		msgs = append(msgs, outMessage{raw: rest[0], response: response})
	default:
		msgs = append(msgs, outMessage{raw: jsonrpc.JoinBatch(rest), response: response})
	}
	for i := range msgs {
		msgs[i].later = run[0].unsolicited
	}
	return msgs
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// immediate reports whether carrying the plan out can never wait: it only
// sends messages in answer (no delay, awaited reply, listen, trickle, cut,
// notification to publish, or miss to explain first).
func (p *answerPlan) immediate() bool {
	if p.pending() || p.Trickle > 0 || p.CutAfter > 0 {
		return false
	}
	for i := range p.Steps {
		if p.Steps[i].Kind != stepSend || p.Steps[i].Notify {
			return false
		}
	}
	return true
}

// afterDelays calls run once the delays that begin plan have elapsed or ctx
// has ended, and marks them waited so that carry does not wait them again;
// a plan that begins with no delay, or a miss (explained before anything
// else), runs at once. run is called on a goroutine of its own, either way.
// While it waits, a request holds a timer and no goroutine: a parked
// goroutine costs every garbage collection a scan of its stack, so that N
// requests delayed together made each collection cost O(N) and each request
// a cost that grew with the number pending (`go run ./bench -only growth
// -growth-only pending` measures it).
func (p *answerPlan) afterDelays(ctx context.Context, run func()) {
	var d time.Duration
	n := 0
	for n < len(p.Steps) && p.Steps[n].Kind == stepDelay {
		d += p.Steps[n].Delay
		n++
	}
	if d <= 0 || p.pending() || ctx.Err() != nil {
		go run()
		return
	}
	p.waited = n
	// Either callback may fire before the other is set: mu orders them.
	var (
		mu    sync.Mutex
		fired bool
		t     *time.Timer
		stop  func() bool
	)
	once := func(cancel func()) {
		mu.Lock()
		first := !fired
		fired = true
		mu.Unlock()
		if first {
			cancel()
			run()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(d, func() { once(func() { stop() }) })
	stop = context.AfterFunc(ctx, func() { once(func() { t.Stop() }) })
}

// delayed waits for the delays among steps, until ctx ends.
func (s *session) delayed(ctx context.Context, steps []step) {
	for _, st := range steps {
		if st.Kind == stepDelay && ctx.Err() == nil {
			sleep(ctx, st.Delay)
		}
	}
}

// inflight is a connection's table of the requests in flight (stdio: its
// stream; Streamable HTTP and HTTP+SSE: its session), for
// notifications/cancelled and for the end of the connection.
type inflight struct {
	mu     sync.Mutex
	cancel map[jsonrpc.ID]context.CancelCauseFunc
	ended  bool
	plans  sync.WaitGroup // plans being carried out
	// waiting is Options.Waiting, told of each request added with a
	// cancel (one whose plan waits) and of its end.
	waiting func(delta int)
}

// add registers a request in flight, with the cancel of its context (nil
// for a plan that cannot wait); forget forgets it once its plan is carried
// out. It reports false, registering nothing, when the connection has
// ended.
func (t *inflight) add(id jsonrpc.ID, cancel context.CancelCauseFunc) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	if t.cancel == nil {
		t.cancel = map[jsonrpc.ID]context.CancelCauseFunc{}
	}
	t.plans.Add(1)
	t.cancel[id] = cancel
	if cancel != nil && t.waiting != nil { // else answered at once
		t.waiting(1)
	}
	return true
}

// forget forgets a request that add registered with cancel.
func (t *inflight) forget(id jsonrpc.ID, cancel context.CancelCauseFunc) {
	t.mu.Lock()
	delete(t.cancel, id)
	t.mu.Unlock()
	if cancel != nil && t.waiting != nil {
		t.waiting(-1)
	}
	t.plans.Done()
}

// cancelled cancels the request that a notifications/cancelled names.
func (t *inflight) cancelled(msg *jsonrpc.Message) {
	id, err := jsonrpc.Member(msg.Params, "requestId")
	if err != nil || id == nil {
		return
	}
	t.mu.Lock()
	cancel := t.cancel[jsonrpc.ID(id)]
	t.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByClient)
	}
}

// end cancels every request in flight with cause, and refuses new ones.
func (t *inflight) end(cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	for _, cancel := range t.cancel {
		if cancel != nil {
			cancel(cause)
		}
	}
}

// open reports whether the connection takes requests: it has not ended.
func (t *inflight) open() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.ended
}

// wait waits until the plans in flight are carried out.
func (t *inflight) wait() { t.plans.Wait() }

// errCancelledByClient is the cause of a request's context that the
// client cancelled: the rest of its plan is dropped.
var errCancelledByClient = errors.New("cancelled by the client")
