package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/grow"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/stdio"
)

// Serve replays the cassette to one client speaking newline-delimited
// JSON-RPC (the stdio transport) on r and w, as one session. It returns when
// r reaches EOF (nil) or ctx ends, after the answers in flight are written.
// Requests are answered concurrently, as a real server may.
func (e *Engine) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return e.serveSession(ctx, e.newSession(), r, w)
}

// serveSession is Serve with a session made by the caller.
//
// One goroutine reads the client's lines and handles each in turn; a
// request whose plan waits for nothing (the common case: a recorded
// answer) is answered there, before the next line is read, and its answer
// written at once when the stream takes it (post). A call then costs no
// hand-off between goroutines. A plan that waits (a delay, a reply of the
// client's, a trickle) runs on a timer or a goroutine of its own, as the
// executor decides.
func (e *Engine) serveSession(ctx context.Context, s *session, r io.Reader, w io.Writer) error {
	c := newConn(e, s, w)
	if f, ok := w.(*os.File); ok {
		if o := stdio.NewOut(f); o != nil {
			c.try = o
		}
	}
	defer c.settle()

	defer s.attach(c.send)()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	c.end = func(err error) {
		c.endOnce.Do(func() {
			c.endErr = err
			stop()
			c.outMu.Lock()
			for c.writing {
				c.idle.Wait() // what was sent before is written first
			}
			c.closed = true
			if cl, ok := w.(io.Closer); ok {
				cl.Close()
			}
			if c.try != nil {
				c.try.Close() // the client sees the end once both are closed
				c.try = nil
			}
			c.outMu.Unlock()
		})
	}
	var (
		readErr  error
		readDone = make(chan struct{})
		handling sync.Mutex // held while the reader handles a line
	)
	go func() {
		defer close(readDone)
		err := jsonrpc.PumpLines(r, func(line []byte) error {
			handling.Lock()
			defer handling.Unlock()
			if err := ctx.Err(); err != nil {
				return err
			}
			c.receive(ctx, line)
			return nil
		}, &jsonrpc.PumpOptions{TooLong: func(tooLong *jsonrpc.LineTooLongError) error {
			livelog.Raw(e.opts.Logger, livelog.ToServer, nil, tooLong.Error())
			c.post(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + tooLong.Error()}))
			return nil
		}})
		if err != nil && ctx.Err() == nil {
			readErr = err
		}
	}()
	select {
	case <-readDone:
	case <-ctx.Done():
		// The reader may stay blocked in a read; once it has finished the
		// line it was handling, it handles no more.
		handling.Lock()
		handling.Unlock()
	}
	// The client is gone or ctx ended: answers still in flight are written,
	// but nobody will reply to server-to-client requests any more.
	stop()
	c.calls.wait()
	c.wg.Wait()
	if c.endErr != nil {
		return c.endErr
	}
	select {
	case <-readDone:
		return readErr
	default:
		return nil
	}
}

func newConn(e *Engine, s *session, w io.Writer) *conn {
	c := &conn{e: e, s: s, out: w}
	c.calls.waiting = e.opts.Waiting
	c.idle.L = &c.outMu
	c.now = &lineOutlet{c: c, respond: c.post, write: c.post}
	c.later = &lineOutlet{c: c, respond: c.send, write: c.send}
	return c
}

// tryWriter is a stream that can be written without waiting (package
// stdio's Out): TryWrite writes what the stream takes at once.
type tryWriter interface {
	TryWrite(p []byte) (int, error)
	Close() error
}

// settle returns once what was sent is written, and closes the stream's
// way of writing without waiting: later sends wait for the stream.
func (c *conn) settle() {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	for c.writing {
		c.idle.Wait()
	}
	if c.try != nil {
		c.try.Close()
		c.try = nil
	}
}

// conn is one stream-connected client: its framing, one message a line.
type conn struct {
	e *Engine
	s *session

	// The writes: a message sent is appended to queued, and the sender
	// that finds no write going on writes it, and what others queue
	// meanwhile, itself. Senders never wait for another's write, so that
	// answers ready together (N delayed requests whose delays end at
	// once) cost one append each rather than N goroutines parked on a
	// lock, and a lone answer still costs no hand-off to a writer.
	// A stream that can be written without waiting (try) is written at
	// once by every sender; what it does not take goes to a goroutine that
	// waits (drain), so that no sender waits, the reader included.
	outMu   sync.Mutex // guards the fields below
	out     io.Writer
	try     tryWriter // out, when it can be written without waiting
	line    []byte    // the line being tried (try)
	queued  []byte    // lines waiting for the writer
	spare   []byte    // the memory of the last lines written, for queued
	writing bool      // a sender is writing
	closed  bool      // end closed out: sends are dropped
	idle    sync.Cond // on outMu: signalled when writing ends

	// now and later carry plans out on the stream: now on the reader
	// (it posts), later on a goroutine or a timer (it may wait).
	now, later *lineOutlet

	calls inflight       // requests in flight (executor.go)
	wg    sync.WaitGroup // answers of client batches being joined

	// own is the reader's memory for the next message (borrow), nil for
	// none yet; only the reader uses it.
	own *readMessage
	// elems is the reader's list for the next batch's elements.
	elems []json.RawMessage

	// end closes the connection for a scripted fault; endErr is what
	// ServeSession then returns (an *ExitError, or nil).
	end     func(err error)
	endOnce sync.Once
	endErr  error
}

// send writes one message line after those sent before it. It may wait for
// the stream; the reader posts instead.
func (c *conn) send(msg []byte) {
	c.outMu.Lock()
	if c.closed || c.try != nil {
		c.postLocked(msg)
		c.outMu.Unlock()
		return
	}
	c.queued = append(append(c.queued, msg...), '\n')
	if c.writing {
		c.outMu.Unlock()
		return // the writer writes it
	}
	c.writing = true
	c.flush()
	c.writing = false
	c.idle.Broadcast()
	c.outMu.Unlock()
}

// post is send that never waits: the line is written at once as far as
// the stream takes it (try), and the rest, or the whole line on a stream
// that cannot be tried, is left to a goroutine that waits for the stream.
// The reader posts, so that a client which writes a burst before it reads
// is still read while its answers wait.
func (c *conn) post(msg []byte) {
	c.outMu.Lock()
	c.postLocked(msg)
	c.outMu.Unlock()
}

// postLocked is post with outMu held.
func (c *conn) postLocked(msg []byte) {
	if c.closed {
		return
	}
	if !c.writing && c.try != nil {
		buf := append(append(c.line[:0], msg...), '\n')
		if cap(buf) <= maxKeptResponse {
			c.line = buf
		}
		c.tryLine(buf, false)
		return
	}
	c.queued = append(append(c.queued, msg...), '\n')
	c.startWriter()
}

// postLine is post of a line that ends with its newline and that the
// caller gives away: what the stream does not take at once waits in that
// memory rather than in a copy (a client batch's answer of megabytes).
func (c *conn) postLine(line []byte) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	switch {
	case c.closed:
	case !c.writing && c.try != nil:
		c.tryLine(line, true)
	default:
		c.enqueue(line, true)
		c.startWriter()
	}
}

// tryLine writes buf as far as the stream takes it at once and leaves the
// rest to the writer; own says that buf is the conn's to keep. The stream
// is full, or failed: the writer then meets the error again, as send
// would.
func (c *conn) tryLine(buf []byte, own bool) {
	n, _ := c.try.TryWrite(buf)
	if n == len(buf) {
		return
	}
	c.enqueue(buf[n:], own)
	c.startWriter()
}

// enqueue adds b to the lines waiting for the writer: in its own memory
// when it is the conn's to keep (own) and nothing else waits.
func (c *conn) enqueue(b []byte, own bool) {
	if own && len(c.queued) == 0 {
		c.queued = b
		return
	}
	c.queued = append(c.queued, b...)
}

// startWriter starts a writer (drain) for what is queued, unless a sender
// is writing: it writes it.
func (c *conn) startWriter() {
	if c.writing {
		return
	}
	c.writing = true
	go c.drain()
}

// drain is the writer that post started: it writes what is queued, waiting
// for the stream as long as it must.
func (c *conn) drain() {
	c.outMu.Lock()
	c.flush()
	c.writing = false
	c.idle.Broadcast()
	c.outMu.Unlock()
}

// flush writes the queued lines until none are left, with outMu held but
// released during each write; the caller is the writer.
func (c *conn) flush() {
	for len(c.queued) > 0 {
		buf := c.queued
		c.queued = c.spare[:0]
		c.outMu.Unlock()
		c.out.Write(buf) // an io.Writer keeps nothing of what it is given
		c.outMu.Lock()
		if cap(buf) <= maxKeptResponse {
			c.spare = buf[:0]
		} else {
			c.spare = nil
		}
	}
}

// trickle writes one message line at rate bytes a second, after what was
// sent before it; what is sent meanwhile follows it.
func (c *conn) trickle(msg []byte, rate int) {
	c.outMu.Lock()
	for c.writing {
		c.idle.Wait()
	}
	if c.closed {
		c.outMu.Unlock()
		return
	}
	c.writing = true
	c.flush()
	c.outMu.Unlock()
	buf := append(append([]byte(nil), msg...), '\n')
	const tick = 50 * time.Millisecond
	chunk := max(1, rate*int(tick)/int(time.Second))
	for len(buf) > 0 {
		n := min(chunk, len(buf))
		if _, err := c.out.Write(buf[:n]); err != nil {
			break
		}
		buf = buf[n:]
		if len(buf) > 0 {
			time.Sleep(tick)
		}
	}
	c.outMu.Lock()
	c.flush()
	c.writing = false
	c.idle.Broadcast()
	c.outMu.Unlock()
}

// receive handles one line, a message or a batch, on the reader; the line
// is the reader's memory, valid until it returns: each message is handled
// in a copy that stays its own as long as the session may keep it
// (borrow).
func (c *conn) receive(ctx context.Context, line []byte) {
	if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '[' {
		c.borrow(ctx, line, c.now, c.later, nil)
		return
	}
	elems, _, err := jsonrpc.AppendBatch(c.elems, line)
	if err != nil {
		livelog.Raw(c.e.opts.Logger, livelog.ToServer, line, "parse error")
		c.post(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + err.Error()}))
		return
	}
	if len(elems) == 0 {
		c.post(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: empty batch"}))
		return
	}
	// A batch: answers go back together in one array, once all are ready.
	answer := &batchAnswer{hint: min(len(line), maxHintAnElement*len(elems))}
	var wg sync.WaitGroup
	now := &lineOutlet{c: c, respond: answer.add, write: c.post, inBatch: true}
	later := &lineOutlet{c: c, respond: answer.add, write: c.send, inBatch: true}
	handled, done := true, wg.Done // every element was handled here
	for _, el := range elems {
		wg.Add(1)
		handled = c.borrow(ctx, el, now, later, done) && handled
	}
	// The elements are pieces of the line: the next batch's list holds
	// none of them.
	if clear(elems); cap(elems) <= maxKeptElems {
		c.elems = elems[:0]
	}
	if handled {
		if answer.buf != nil {
			c.postLine(answer.line())
		}
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		wg.Wait()
		if answer.buf != nil {
			line := answer.line()
			c.send(line[:len(line)-1])
		}
	}()
}

// maxKeptElems is the longest list of a batch's elements that the reader
// keeps for the next batch.
const maxKeptElems = 4096

// batchAnswer is the answer to a client's batch: the responses, copied in
// as they come, joined into one line ("[r1,r2]" and its newline). The
// responses' own memory is then the plans', used again by the next
// request: a batch of N requests costs this line, not N responses, N
// slices and their join.
type batchAnswer struct {
	mu   sync.Mutex
	buf  []byte // '[' and the responses joined, nil before the first
	hint int    // the room the first response makes (receive)
}

// maxHintAnElement bounds the room that a batch's answer makes at first
// for each element: answers are about as long as their requests, but one
// that carries a megabyte gets a short answer, which grows by doubling if
// it must.
const maxHintAnElement = 1 << 10

func (b *batchAnswer) add(msg []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Room for a comma, msg, the closing bracket and the newline; grown
	// by doubling, so that memory written in all is about twice the
	// line's.
	if need := len(msg) + 3; cap(b.buf)-len(b.buf) < need {
		b.buf = grow.Slice(b.buf, max(need, b.hint+2))
	}
	if len(b.buf) == 0 {
		b.buf = append(b.buf, '[')
	} else {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, msg...)
}

// line is the answer's line, once every response is in.
func (b *batchAnswer) line() []byte {
	return append(b.buf, ']', '\n')
}

// borrow handles one message (not a batch) on the reader, in the reader's
// own memory: a copy of line and its parse, which the next message uses
// again when the session kept nothing of this one: a request answered at
// once from the cassette (handle's free), on an engine that hands messages
// to no one (keepsNothing). Any other message keeps its memory, as a copy
// of its own would be, and the next gets new. A call then allocates
// nothing but its id's string: garbage a call is what makes a large
// cassette slower (page faults on the fresh memory the heap grows into;
// see docs/performance.md). now, later and done are handle's; borrow
// reports whether the message was fully handled before it returned.
func (c *conn) borrow(ctx context.Context, line []byte, now, later *lineOutlet, done func()) (handled bool) {
	rm := c.own
	c.own = nil
	if rm == nil {
		rm = new(readMessage)
	}
	rm.raw = append(rm.raw[:0], line...)
	// The id is a view of the line's copy, as the params are: the message
	// is used again only when the session kept nothing of it (free), and
	// what keeps an id alone copies it (a miss, for its report: a view
	// would keep the whole line, TestMissesKeepNotTheirLines).
	err := jsonrpc.ParseViewInto(&rm.msg, rm.raw)
	msg := &rm.msg
	if err != nil && msg.Raw == nil {
		msg = nil // not a JSON object: no message, as Parse returns
	}
	handled, free := c.handle(ctx, rm.raw, msg, err, now, later, done)
	if !free || !c.e.keepsNothing() || cap(rm.raw) > maxKeptResponse {
		return handled
	}
	if poisonFreed {
		clear(rm.raw[:cap(rm.raw)])
		rm.msg = jsonrpc.Message{Method: "poisoned", Raw: rm.raw, Params: rm.raw}
	}
	c.own = rm
	return handled
}

// readMessage is the reader's memory for one message: the line's copy and
// its parse.
type readMessage struct {
	raw []byte
	msg jsonrpc.Message
}

// handle handles one message on the reader, raw parsed into msg and err
// as jsonrpc.Parse returns them: a plan that waits for nothing is carried
// out here through now, and one that waits is left to a timer or a
// goroutine, which carry it out through later. done, if non-nil, is
// called once the message is fully handled; handled reports whether that
// was before handle returned. free reports that the message was a request
// answered at once from the cassette, as recorded: the session keeps
// nothing of such a message once it is answered (borrow).
func (c *conn) handle(ctx context.Context, raw []byte, msg *jsonrpc.Message, err error, now, later *lineOutlet, done func()) (handled, free bool) {
	if err != nil {
		now.respond(jsonrpc.ErrorResponse(c.e.invalid(raw, msg, err)))
		finish(done)
		return true, false
	}
	start := time.Now()
	plan := c.s.receive(msg, &c.calls)
	switch {
	case plan == nil:
	case plan.immediate():
		free = msg.Kind() == jsonrpc.KindRequest && plan.Interaction > 0 && plan.Miss == nil && plan.Scripted == ""
		// Nothing can cancel it (a notifications/cancelled would be read
		// after it), so it is not entered among the calls in flight.
		if c.calls.open() {
			c.s.carry(ctx, msg, plan, start, now)
		}
		plan.releaseAll()
	default:
		c.wait(ctx, msg, plan, start, later, done)
		return false, false
	}
	finish(done)
	return true, free
}

// poisonFreed, set by the package's tests, overwrites the memory of a
// message that borrow uses again as soon as it is free, so that anything
// that kept a part of it reads zeros.
var poisonFreed bool

// wait carries out a plan that waits, once its leading delays are over
// (afterDelays), among the calls in flight, so that the client can cancel
// it; then calls done.
func (c *conn) wait(ctx context.Context, msg *jsonrpc.Message, plan *answerPlan, start time.Time, out *lineOutlet, done func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	if !c.calls.add(msg.ID, cancel) {
		cancel(nil)
		finish(done)
		return
	}
	plan.afterDelays(rctx, func() {
		defer finish(done)
		defer c.calls.forget(msg.ID, cancel)
		defer cancel(nil)
		c.s.carry(rctx, msg, plan, start, out)
		plan.releaseAll()
	})
}

// finish calls done, if there is one.
func finish(done func()) {
	if done != nil {
		done()
	}
}

// lineOutlet carries a plan out on a stream (executor.go).
type lineOutlet struct {
	c       *conn
	respond func([]byte) // the response: the stream, or a client batch's answer
	write   func([]byte) // the other messages: the stream (post or send)
	inBatch bool         // respond collects a client batch's answer
}

func (o *lineOutlet) send(m outMessage) error {
	switch {
	case m.trickle > 0:
		o.c.trickle(m.raw, m.trickle)
	case m.response:
		o.respond(m.raw)
	default:
		o.write(m.raw)
	}
	return nil
}

func (o *lineOutlet) end(st *step) {
	if st.Kind == stepExit {
		o.c.end(&ExitError{Status: st.ExitStatus})
		return
	}
	o.c.end(nil)
}

func (o *lineOutlet) status() func(*step) { return nil }

func (o *lineOutlet) batches() (join, withResponse bool) {
	return o.c.s.batches(), !o.inBatch
}

func (o *lineOutlet) outlives() bool { return true }

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
