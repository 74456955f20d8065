package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// Serve replays the cassette to one client speaking newline-delimited
// JSON-RPC (the stdio transport) on r and w, as one session. It returns when
// r reaches EOF (nil) or ctx ends, after the answers in flight are written.
// Requests are answered concurrently, as a real server may.
func (e *Engine) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return e.ServeSession(ctx, e.NewSession(), r, w)
}

// ServeSession is Serve with a session made by the caller.
func (e *Engine) ServeSession(ctx context.Context, s *Session, r io.Reader, w io.Writer) error {
	c := &conn{e: e, s: s, out: w, inflight: map[jsonrpc.ID]context.CancelCauseFunc{}}
	defer s.attach(c.send)()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	c.end = func(err error) {
		c.endOnce.Do(func() {
			c.endErr = err
			stop()
			if cl, ok := w.(io.Closer); ok {
				c.outMu.Lock()
				cl.Close()
				c.outMu.Unlock()
			}
		})
	}
	lr := jsonrpc.NewLineReader(r, 0)
	var readErr error
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		for {
			line, err := lr.ReadLine()
			var tooLong *jsonrpc.LineTooLongError
			switch {
			case errors.As(err, &tooLong):
				livelog.Raw(e.opts.Logger, livelog.ToServer, nil, tooLong.Error())
				c.send(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + tooLong.Error()}))
				continue
			case err != nil:
				if err != io.EOF {
					readErr = err
				}
				return
			}
			select {
			case lines <- append([]byte(nil), line...):
			case <-ctx.Done():
				return
			}
		}
	}()
loop:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				break loop
			}
			c.receive(ctx, line)
		case <-ctx.Done():
			break loop
		}
	}
	// The client is gone or ctx ended: answers still in flight are written,
	// but nobody will reply to server-to-client requests any more.
	stop()
	c.wg.Wait()
	if c.endErr != nil {
		return c.endErr
	}
	if readErr != nil {
		return readErr
	}
	return nil
}

// conn is one stream-connected client.
type conn struct {
	e *Engine
	s *Session

	outMu sync.Mutex // guards out and line
	out   io.Writer
	line  []byte // the line being written, reused

	mu       sync.Mutex // guards inflight
	inflight map[jsonrpc.ID]context.CancelCauseFunc
	wg       sync.WaitGroup // plans being carried out

	// end closes the connection for a scripted fault; endErr is what
	// ServeSession then returns (an *ExitError, or nil).
	end     func(err error)
	endOnce sync.Once
	endErr  error
}

func (c *conn) send(msg []byte) {
	c.trickle(msg, 0)
}

// trickle writes one message line, at rate bytes a second when rate > 0.
func (c *conn) trickle(msg []byte, rate int) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	buf := append(append(c.line[:0], msg...), '\n')
	if cap(buf) <= maxKeptResponse {
		c.line = buf // an io.Writer keeps nothing of what it is given
	}
	if rate <= 0 {
		c.out.Write(buf)
		return
	}
	const tick = 50 * time.Millisecond
	chunk := max(1, rate*int(tick)/int(time.Second))
	for len(buf) > 0 {
		n := min(chunk, len(buf))
		if _, err := c.out.Write(buf[:n]); err != nil {
			return
		}
		buf = buf[n:]
		if len(buf) > 0 {
			time.Sleep(tick)
		}
	}
}

// receive handles one line: a message or a batch.
func (c *conn) receive(ctx context.Context, line []byte) {
	elems, batch, err := jsonrpc.SplitBatch(line)
	if err != nil {
		livelog.Raw(c.e.opts.Logger, livelog.ToServer, line, "parse error")
		c.send(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + err.Error()}))
		return
	}
	if batch && len(elems) == 0 {
		c.send(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: empty batch"}))
		return
	}
	if !batch {
		c.handle(ctx, elems[0], nil)
		return
	}
	// A batch: answers go back together in one array, once all are ready.
	var (
		mu        sync.Mutex
		responses [][]byte
		wg        sync.WaitGroup
	)
	collect := func(msg []byte) {
		mu.Lock()
		responses = append(responses, msg)
		mu.Unlock()
	}
	for _, el := range elems {
		wg.Add(1)
		c.handle(ctx, el, func(msg []byte) { collect(msg) }, wg.Done)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		wg.Wait()
		if len(responses) > 0 {
			c.send(jsonrpc.JoinBatch(responses))
		}
	}()
}

// handle handles one message. respond, if non-nil, takes the response
// instead of the stream (for batches); done, if given, is called when the
// message is fully handled.
func (c *conn) handle(ctx context.Context, raw []byte, respond func([]byte), done ...func()) {
	finish := func() {
		for _, d := range done {
			d()
		}
	}
	inBatch := respond != nil
	if respond == nil {
		respond = c.send
	}
	log := c.e.opts.Logger
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && msg != nil {
			livelog.Raw(log, livelog.ToServer, raw, rpcErr.Message)
			c.e.stats.messages.Add(1)
			respond(jsonrpc.ErrorResponse(invalidID(raw, msg), rpcErr))
		} else {
			livelog.Raw(log, livelog.ToServer, raw, "parse error")
			c.e.stats.messages.Add(1)
			// JSON that is no message object (42, "x", null) is an
			// invalid request, not a parse error.
			code, text := jsonrpc.CodeParseError, "Parse error: "
			if json.Valid(raw) {
				code, text = jsonrpc.CodeInvalidRequest, "Invalid Request: "
			}
			respond(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: code, Message: text + err.Error()}))
		}
		finish()
		return
	}
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		livelog.Message(log, livelog.ToServer, msg, 0, "")
		c.s.Deliver(msg)
		finish()
		return
	case jsonrpc.KindNotification:
		livelog.Message(log, livelog.ToServer, msg, 0, "")
		c.s.Handle(msg).Release()
		if msg.Method == "notifications/cancelled" {
			c.cancel(msg)
		}
		finish()
		return
	}
	start := time.Now()
	note := ""
	// A miss is explained in the request's goroutine (settle): the next
	// requests are not kept waiting for it.
	plan := c.s.planFor(msg)
	switch {
	case plan.Miss != nil:
		note = "no match"
	case plan.Interaction > 0:
		note = "replayed #" + strconv.Itoa(plan.Interaction)
	}
	livelog.Message(log, livelog.ToServer, msg, 0, note)
	rctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	c.inflight[msg.ID] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer finish()
		defer func() {
			cancel(nil)
			c.mu.Lock()
			delete(c.inflight, msg.ID)
			c.mu.Unlock()
		}()
		if plan.Miss != nil {
			// Explained in full even when the session ends: the answers
			// in flight are still written (ServeSession).
			c.s.settle(context.WithoutCancel(rctx), msg, plan)
			log.Warn(strings.TrimPrefix(plan.Miss.Report(), "mcpmock: "))
		}
		c.run(rctx, plan, start, respond, inBatch)
		if inBatch {
			plan.Release() // the batch answer holds the response
		} else {
			plan.ReleaseAll() // c.send copied every message it wrote
		}
	}()
}

// run carries out a plan. When the request is cancelled, what is left of
// the plan is dropped.
func (c *conn) run(ctx context.Context, plan *Plan, start time.Time, respond func([]byte), inBatch bool) {
	log := c.e.opts.Logger
	sent := 0
	for i := 0; i < len(plan.Steps); i++ {
		st := plan.Steps[i]
		switch st.Kind {
		case StepSend, StepHTTPStatus:
			if c.s.withdrawn(st) { // protocol_elicit.go
				break
			}
			if n := batchRun(plan.Steps[i:]); n > 1 && plan.Trickle == 0 && plan.CutAfter == 0 && c.s.batches() {
				// A recorded server batch: one line (protocol_batch.go),
				// to a session of a version that has batches.
				c.sendBatch(plan.Steps[i:i+n], start, respond, inBatch)
				i += n - 1
				break
			}
			if st.Notify {
				c.s.publish(st.Message)
				break
			}
			note := ""
			if plan.Scripted != "" && st.Response {
				note = "scripted: " + plan.Scripted
			}
			if m, err := jsonrpc.Parse(st.Message); err == nil {
				var lat time.Duration
				if st.Response {
					lat = time.Since(start)
				}
				livelog.Message(log, livelog.ToClient, m, lat, note)
			} else {
				livelog.Raw(log, livelog.ToClient, st.Message, "as recorded or scripted")
			}
			switch {
			case plan.Trickle > 0:
				c.trickle(st.Message, plan.Trickle)
			case st.Response:
				respond(st.Message)
			default:
				c.send(st.Message)
			}
			if sent++; plan.CutAfter > 0 && sent >= plan.CutAfter {
				log.Warn(fmt.Sprintf("✗ scripted fault: connection cut after %d messages (%s)", sent, plan.Scripted))
				c.end(nil)
				return
			}
		case StepAwaitReply:
			reply, err := c.s.AwaitReply(ctx, st.ReplyID)
			if err != nil && ctx.Err() == nil {
				log.Warn(err.Error())
			}
			if ctx.Err() == nil {
				if fail := c.s.checkReply(plan, st, reply); fail != nil {
					respond(fail)
					return
				}
			}
		case StepListen:
			if !c.s.serveListen(ctx, st.ReplyID, func(msg []byte) error { c.send(msg); return nil }) {
				return
			}
		case StepDelay:
			t := time.NewTimer(st.Delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		case StepClose:
			log.Warn("✗ scripted fault: connection closed (" + plan.Scripted + ")")
			c.end(nil)
			return
		case StepExit:
			log.Warn(fmt.Sprintf("✗ scripted fault: server exits with status %d (%s)", st.ExitStatus, plan.Scripted))
			c.end(&ExitError{Status: st.ExitStatus})
			return
		}
		if ctx.Err() != nil && c.cancelled(ctx) {
			return
		}
	}
}

// cancelled tells a request cancelled by the client (drop the rest) from a
// session that ends (finish what was planned).
func (c *conn) cancelled(ctx context.Context) bool {
	return context.Cause(ctx) == errCancelledByClient
}

var errCancelledByClient = errors.New("cancelled by the client")

func (c *conn) cancel(msg *jsonrpc.Message) {
	id, err := jsonrpc.Member(msg.Params, "requestId")
	if err != nil || id == nil {
		return
	}
	c.mu.Lock()
	cancel, ok := c.inflight[jsonrpc.ID(id)]
	c.mu.Unlock()
	if ok {
		cancel(errCancelledByClient)
	}
}

// invalidID is the id that answers an invalid message, on every
// transport: its "id" wherever that could be read as a string or a number
// (even when Parse stopped before it, at a "method" that is no string),
// else none (null), as JSON-RPC 2.0 says.
func invalidID(raw []byte, msg *jsonrpc.Message) jsonrpc.ID {
	var id jsonrpc.ID
	if msg != nil {
		id = msg.ID
	}
	if id == "" {
		if v, err := jsonrpc.Member(raw, "id"); err == nil {
			id = jsonrpc.ID(bytes.TrimSpace(v))
		}
	}
	if !validID(id) {
		return ""
	}
	return id
}

func validID(id jsonrpc.ID) bool {
	if id == "" {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}
