package replayer

import (
	"bytes"
	"context"
	"io"
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
	return e.serveSession(ctx, e.newSession(), r, w)
}

// ServeSession is Serve with a session made by the caller.
func (e *Engine) serveSession(ctx context.Context, s *session, r io.Reader, w io.Writer) error {
	c := &conn{e: e, s: s, out: w}
	c.idle.L = &c.outMu
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
			c.outMu.Unlock()
		})
	}
	var readErr error
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		err := jsonrpc.PumpLines(r, func(line []byte) error {
			select {
			case lines <- append([]byte(nil), line...):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, &jsonrpc.PumpOptions{TooLong: func(tooLong *jsonrpc.LineTooLongError) error {
			livelog.Raw(e.opts.Logger, livelog.ToServer, nil, tooLong.Error())
			c.send(jsonrpc.ErrorResponse("", &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: " + tooLong.Error()}))
			return nil
		}})
		if err != nil && ctx.Err() == nil {
			readErr = err
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
	c.calls.wait()
	c.wg.Wait()
	if c.endErr != nil {
		return c.endErr
	}
	if readErr != nil {
		return readErr
	}
	return nil
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
	outMu   sync.Mutex // guards the fields below
	out     io.Writer
	queued  []byte    // lines waiting for the writer
	spare   []byte    // the memory of the last lines written, for queued
	writing bool      // a sender is writing
	closed  bool      // end closed out: sends are dropped
	idle    sync.Cond // on outMu: signalled when writing ends

	calls inflight       // requests in flight (executor.go)
	wg    sync.WaitGroup // answers of client batches being joined

	// end closes the connection for a scripted fault; endErr is what
	// ServeSession then returns (an *ExitError, or nil).
	end     func(err error)
	endOnce sync.Once
	endErr  error
}

func (c *conn) send(msg []byte) {
	c.outMu.Lock()
	if c.closed {
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
		c.handle(ctx, elems[0], nil, nil)
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
		c.handle(ctx, el, collect, wg.Done)
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
// instead of the stream (for batches); done, if non-nil, is called when
// the message is fully handled.
func (c *conn) handle(ctx context.Context, raw []byte, respond func([]byte), done func()) {
	finish := func() {
		if done != nil {
			done()
		}
	}
	out := &lineOutlet{c: c, respond: respond, inBatch: respond != nil}
	if respond == nil {
		out.respond = c.send
	}
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		out.respond(jsonrpc.ErrorResponse(c.e.invalid(raw, msg, err)))
		finish()
		return
	}
	start := time.Now()
	plan := c.s.receive(msg, &c.calls)
	if plan == nil {
		finish()
		return
	}
	rctx, cancel := context.WithCancelCause(ctx)
	forget, ok := c.calls.add(msg.ID, cancel)
	if !ok {
		cancel(nil)
		finish()
		return
	}
	run := func() {
		defer finish()
		defer forget()
		defer cancel(nil)
		c.s.carry(rctx, msg, plan, start, out)
		if respond != nil {
			plan.release() // the batch answer holds the response
		} else {
			plan.releaseAll() // c.send copied every message it wrote
		}
	}
	if respond != nil && plan.immediate() {
		// An element of a client batch that waits for nothing is carried
		// out here: its answer goes to the batch's, not to the stream, and
		// a goroutine each made a batch of N cost every collection N stack
		// scans (30 µs an element at 100,000 against 15 µs at 1,000).
		run()
		return
	}
	plan.afterDelays(rctx, run)
}

// lineOutlet carries a plan out on a stream (executor.go).
type lineOutlet struct {
	c       *conn
	respond func([]byte) // the response: the stream, or a client batch's answer
	inBatch bool         // respond collects a client batch's answer
}

func (o *lineOutlet) send(m outMessage) error {
	switch {
	case m.trickle > 0:
		o.c.trickle(m.raw, m.trickle)
	case m.response:
		o.respond(m.raw)
	default:
		o.c.send(m.raw)
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
