package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one connection: requests are read and answered in turn on its
// goroutine.
type conn struct {
	srv      *Server
	rwc      net.Conn
	io       io.ReadWriter // rwc's reads and writes: raw where they can be (rawio_linux.go)
	remote   string
	local    net.Addr // the connection's local address, in its requests' contexts
	r        connReader
	br       *bufio.Reader
	out      []byte // the response being written, reused
	bodyBuf  []byte // its body while the headers wait, reused
	hdr      []byte // the handler's headers, written when it fixed them
	keys     []string
	timer    *time.Timer // starts the watch of a handler that runs long
	strings  stringTable // of its plain requests (readPlain)
	header   http.Header // the last response's header map, cleared for the next (exchange.start)
	spare    *exchange   // the last exchange, released by its handler, for the next request
	lastPost bool        // the last request was a POST
	linger   bool        // close after reading what the client still sends

	mu        sync.Mutex // guards what follows
	idle      bool       // waiting for a request: Shutdown may close it
	shut      bool       // closed by Shutdown
	running   bool       // a handler runs
	late      bool       // and has run for WatchAfter
	bodyDone  bool       // its request's body was read to its end
	hijacked  bool
	watching  bool // a read watches for the client going away
	aborting  bool // and is being stopped
	watchDone chan struct{}
	gone      bool        // the watch saw the client go away
	cur       *reqContext // the running request's context
}

// maxKeptHeaders is the most headers a response's header map held for it
// to be kept for the next response: a larger one's memory is not.
const maxKeptHeaders = 32

// aLongTimeAgo is a deadline in the past, to stop a read at once.
var aLongTimeAgo = time.Unix(1, 0)

// serve reads requests and answers them until the connection ends.
func (c *conn) serve() {
	defer c.close()
	defer context.AfterFunc(c.srv.base, c.serverClosed)()
	c.br = bufio.NewReaderSize(&c.r, 4<<10)
	first := true
	for {
		if !c.next(first) {
			return
		}
		first = false
		x := c.spare
		c.spare = nil
		if x == nil {
			x = new(exchange)
		}
		req, err := c.readRequest(&x.plain)
		if err != nil {
			c.refuse(err)
			return
		}
		if !c.handle(x, req) {
			return
		}
	}
}

// serverClosed ends the running request's context when the server closes.
func (c *conn) serverClosed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running && c.cur != nil {
		c.cur.cancel()
	}
}

// next waits for the first byte of the next request, the connection idle
// meanwhile (Shutdown closes it then); false when the connection is done.
// The header timeout counts from the connection's start for its first
// request, as http.Server's does, and from its first byte for the others.
func (c *conn) next(first bool) bool {
	s := c.srv
	c.r.limit = int64(s.maxHeaderBytes()) + 4096 // as http.Server allows
	if c.br.Buffered() > 0 {
		// A request came with the last (pipelined): its headers are
		// bounded from now.
		if d := s.ReadHeaderTimeout; d > 0 {
			c.rwc.SetReadDeadline(time.Now().Add(d))
		}
		return true
	}
	c.mu.Lock()
	c.idle = true
	shut := s.closing.Load()
	c.mu.Unlock()
	if shut {
		return false
	}
	d := s.ReadHeaderTimeout
	if !first {
		s.setState(c, http.StateIdle)
		d = s.idleTimeout()
	}
	if d > 0 {
		c.rwc.SetReadDeadline(time.Now().Add(d))
	}
	_, err := c.br.Peek(1)
	c.mu.Lock()
	c.idle = false
	shut = c.shut
	c.mu.Unlock()
	if err != nil || shut {
		return false
	}
	if d := s.ReadHeaderTimeout; d > 0 && !first {
		c.rwc.SetReadDeadline(time.Now().Add(d))
	}
	return true
}

// badRequest is a request refused with its reason, as http.Server does.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// errTooLarge is a request line and headers beyond MaxHeaderBytes.
var errTooLarge = errors.New("request headers too large")

// readRequest reads a request's line and headers, within the header limit,
// into p when it is plain.
func (c *conn) readRequest(p *plainRequest) (*http.Request, error) {
	if c.lastPost {
		// Old clients end a POST's body with a line break of its own
		// (RFC 9112, section 2.2), as http.Server tolerates.
		lead, _ := c.br.Peek(min(4, c.br.Buffered()))
		n := 0
		for n < len(lead) && (lead[n] == '\r' || lead[n] == '\n') {
			n++
		}
		c.br.Discard(n)
	}
	req, plain := c.readPlain(c.br, p)
	var err error
	if !plain {
		req, err = http.ReadRequest(c.br)
	}
	hitLimit := c.r.limit <= 0
	c.r.limit = -1
	if err != nil {
		if hitLimit {
			return nil, errTooLarge
		}
		return nil, err
	}
	if c.srv.ReadHeaderTimeout > 0 {
		c.rwc.SetReadDeadline(time.Time{}) // the body's time is the handler's to bound
	}
	if req.ProtoMajor != 1 {
		return nil, badRequest("unsupported protocol version")
	}
	// ReadRequest moved the Host header to req.Host, and refused two.
	if req.ProtoAtLeast(1, 1) && req.Host == "" && req.Method != http.MethodConnect {
		return nil, badRequest("missing required Host header")
	}
	if !validHost(req.Host) {
		return nil, badRequest("malformed Host header")
	}
	c.lastPost = req.Method == http.MethodPost
	req.RemoteAddr = c.remote
	return req, nil
}

// refuse answers a request that could not be read, where it was one, and
// the connection closes.
func (c *conn) refuse(err error) {
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) && ne.Timeout() {
		return
	}
	status := http.StatusBadRequest
	switch {
	case err == errTooLarge:
		status = http.StatusRequestHeaderFieldsTooLarge
	case strings.Contains(err.Error(), "unsupported transfer encoding"):
		status = http.StatusNotImplemented
	case strings.Contains(err.Error(), "unsupported protocol version"):
		status = http.StatusHTTPVersionNotSupported
	}
	// As http.Server says them: the reason of a request refused for what it
	// says, but not the value of a Transfer-Encoding (it could be a script).
	text, body := http.StatusText(status), ""
	var bad badRequest
	switch {
	case status == http.StatusNotImplemented:
		body = "Unsupported transfer encoding"
	case errors.As(err, &bad):
		text += ": " + err.Error()
	}
	if body == "" {
		body = strconv.Itoa(status) + " " + text
	}
	c.rwc.SetWriteDeadline(time.Now().Add(time.Second))
	io.WriteString(c.io, "HTTP/1.1 "+strconv.Itoa(status)+" "+text+"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"+body)
	c.linger = true
}

// handle runs the handler on a request and writes its answer, in x; false
// when the connection is to close.
func (c *conn) handle(x *exchange, req *http.Request) (keep bool) {
	s := c.srv
	w := x.start(c, req)
	ctx := &w.ctx
	defer ctx.cancel()
	*req = *req.WithContext(ctx) // in place: the request is this connection's own
	w.req = req
	if ex := req.Header["Expect"]; len(ex) > 0 {
		if len(ex) != 1 || !strings.EqualFold(ex[0], "100-continue") {
			c.io.Write(append(appendDate([]byte("HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n")), "\r\n"...))
			c.linger = true
			return false
		}
		w.expectContinue = req.ProtoAtLeast(1, 1) && req.ContentLength != 0
		delete(req.Header, "Expect")
	}
	noBody := req.Body == nil || req.Body == http.NoBody
	if !noBody {
		w.bodyStore = body{rc: req.Body, c: c, w: w, expect: w.expectContinue}
		w.reqBody = &w.bodyStore
		req.Body = w.reqBody
	}
	c.mu.Lock()
	c.running, c.late, c.gone, c.bodyDone, c.cur = true, false, false, noBody, ctx
	c.mu.Unlock()
	if s.base.Err() != nil { // closed before the request was running (serverClosed)
		ctx.cancel()
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(WatchAfter, c.lateHandler)
	} else {
		c.timer.Reset(WatchAfter)
	}
	s.setState(c, http.StateActive)
	defer func() {
		if v := recover(); v != nil {
			c.endWatch()
			s.panicked(c, v)
			keep = false
		}
	}()
	s.Handler.ServeHTTP(w, req)
	if w.hijacked {
		return false
	}
	w.finish()
	c.endWatch()
	if len(w.header) <= maxKeptHeaders {
		// The next response's: a handler uses its ResponseWriter, and so
		// its header map, no longer once it has returned.
		clear(w.header)
		c.header = w.header
	}
	c.mu.Lock()
	gone := c.gone
	c.mu.Unlock()
	c.linger = w.lingerClose
	keep = !gone && w.err == nil && !w.closeAfter && !s.closing.Load()
	if keep && w.reusable() {
		c.spare = x
	}
	return keep
}

// lateHandler runs when a handler has run for WatchAfter: the client may
// go away while it runs on, and its request's context must then end.
func (c *conn) lateHandler() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running || c.late {
		return
	}
	c.late = true
	c.watchLocked()
}

// watchLocked starts the watch if the handler runs late and has read its
// request's body (the watch reads the connection); c.mu is held.
func (c *conn) watchLocked() {
	if !c.running || !c.late || !c.bodyDone || c.watching || c.hijacked || c.br.Buffered() > 0 {
		return
	}
	c.watching, c.aborting = true, false
	c.watchDone = make(chan struct{})
	// The header deadline does not bound a handler. It is cleared here,
	// before the watch starts: endWatch, which sets a deadline in the past
	// to stop the watch, takes c.mu after this, whereas the watch's own
	// goroutine may start after it.
	c.rwc.SetReadDeadline(time.Time{})
	go c.watch(c.cur, c.watchDone)
}

// watch reads the connection while a handler runs: a byte is the next
// request, kept for later; an error (not the abort by endWatch) means the
// client went away, and the request's context ends.
func (c *conn) watch(ctx *reqContext, done chan struct{}) {
	defer close(done)
	if f := watchStarts.Load(); f != nil {
		(*f)()
	}
	var b [1]byte
	n, err := c.rwc.Read(b[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	if n == 1 {
		c.r.peek, c.r.peeked = b[0], true
		return
	}
	if err != nil && !c.aborting {
		c.gone = true
		ctx.cancel()
	}
}

// watchStarts, when set (by a test), runs as a watch starts.
var watchStarts atomic.Pointer[func()]

// endWatch stops the timer and the watch, if they started.
func (c *conn) endWatch() {
	c.timer.Stop()
	c.mu.Lock()
	c.running = false
	watching, done := c.watching, c.watchDone
	c.aborting = watching
	c.mu.Unlock()
	if !watching {
		return
	}
	c.rwc.SetReadDeadline(aLongTimeAgo)
	<-done
	c.rwc.SetReadDeadline(time.Time{})
	c.mu.Lock()
	c.watching, c.aborting = false, false
	c.mu.Unlock()
}

// close closes the connection, unless it was hijacked.
func (c *conn) close() {
	c.mu.Lock()
	hijacked := c.hijacked
	c.mu.Unlock()
	if hijacked {
		return
	}
	if c.linger {
		// Closing with bytes of the client's unread would reset the
		// connection, and the client could lose the answer: end the
		// writing side, and read what comes for a while first.
		if cw, ok := c.rwc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
			c.rwc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			io.Copy(io.Discard, io.LimitReader(c.rwc, 1<<20))
		}
	}
	c.rwc.Close()
	c.srv.forget(c, http.StateClosed)
}

// hijack hands the connection to the handler.
func (c *conn) hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.timer.Stop()
	c.mu.Lock()
	if c.hijacked {
		c.mu.Unlock()
		return nil, nil, http.ErrHijacked
	}
	c.hijacked = true
	c.mu.Unlock()
	c.endWatch()
	c.srv.forget(c, http.StateHijacked)
	return c.rwc, bufio.NewReadWriter(c.br, bufio.NewWriter(c.rwc)), nil
}

// connReader reads the connection for the request parser: the byte that a
// watch read comes first, and a request's line and headers are bounded.
type connReader struct {
	c      *conn
	limit  int64 // bytes left to read; negative: no limit
	peek   byte
	peeked bool
}

func (r *connReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.c.mu.Lock()
	if r.peeked {
		r.peeked = false
		p[0] = r.peek
		r.c.mu.Unlock()
		r.limit--
		return 1, nil
	}
	r.c.mu.Unlock()
	if r.limit == 0 {
		return 0, io.EOF
	}
	if r.limit > 0 && int64(len(p)) > r.limit {
		p = p[:r.limit]
	}
	n, err := r.c.io.Read(p)
	if r.limit > 0 {
		r.limit -= int64(n)
	}
	return n, err
}

// body is a request's body: it sends 100 Continue when first read if the
// client expects it, and notes its end, after which the connection may be
// watched.
type body struct {
	rc     io.ReadCloser
	c      *conn
	w      *response
	expect bool
	done   bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if b.expect {
		b.expect = false
		b.w.sendContinue()
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.done = true
		c := b.c
		c.mu.Lock()
		c.bodyDone = true
		c.watchLocked()
		c.mu.Unlock()
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
