package h1

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// bufferLimit is how much of a body waits for the handler to return (or
// flush) before the headers and the body so far go out.
const bufferLimit = 32 << 10

// maxDiscard is how much of a request's body that its handler left unread
// is read and dropped so that the connection can serve the next request,
// as http.Server does; beyond it, the connection closes after the answer.
const maxDiscard = 256 << 10

// discardTimeout bounds the reading of what a handler left of its request's
// body (settleBody).
const discardTimeout = 5 * time.Second

// response is the http.ResponseWriter of one request. Its headers are
// fixed when the handler calls WriteHeader (or first writes), as
// http.Server fixes them; they and the body wait in the connection's
// buffers until the handler flushes, returns or writes more than
// bufferLimit: a short answer is one write, with its Content-Length.
type response struct {
	c              *conn
	req            *http.Request
	header         http.Header
	status         int
	wroteHeader    bool
	committed      bool // the status line and headers are in c.out or sent
	chunked        bool
	closeAfter     bool
	lingerClose    bool // close after reading what the client still sends
	hijacked       bool
	head           bool
	fullDuplex     bool
	expectContinue bool
	continued      bool // 100 Continue sent, or no longer possible

	// What WriteHeader found in the handler's headers, whose other lines
	// it wrote to c.hdr.
	declared    int64 // Content-Length, or -1
	teChunked   bool  // Transfer-Encoding: chunked
	hasType     bool
	hasEncoding bool
	hasDate     bool
	connClose   bool
	trailers    []string // the names a Trailer header declared
	anyTrailer  bool     // a trailer will follow (declared or prefixed)

	total   int64  // body bytes the handler wrote
	body    []byte // written before the headers went: in c.bodyBuf
	reqBody *body  // nil when the request had none
	// bodyStore is reqBody's, made with the response.
	bodyStore body
	err       error
	// ctx is the request's context (reqContext), made with the response.
	ctx reqContext
	// released says that the handler keeps nothing of the request or of
	// the response past its return (Release).
	released bool
}

// exchange is the memory of one request and its response, in one
// allocation. The connection uses it again for its next request when the
// handler released them (Release).
type exchange struct {
	w     response
	plain plainRequest // the request, when it was plain (readPlain)
}

// start makes x.w the new response to req.
func (x *exchange) start(c *conn, req *http.Request) *response {
	header := c.header
	c.header = nil
	if header == nil {
		header = make(http.Header)
	}
	x.w = response{c: c, req: req, header: header, head: req.Method == http.MethodHead, declared: -1, ctx: reqContext{local: c.local}}
	x.w.body = c.bodyBuf[:0]
	return &x.w
}

// Release tells the server that the handler of w keeps nothing of its
// request or of w once it has returned: not the request, its header map,
// URL or body, nor w; nothing writes to w later, and nothing waits on the
// request's context or learns of its end (Done, AfterFunc). The server then
// reads the connection's next request into the same memory, and answers it
// with the same response. Release does nothing to a ResponseWriter of
// another server.
func Release(w http.ResponseWriter) {
	if r, ok := w.(*response); ok {
		r.released = true
	}
}

// reusable reports whether the connection may use the memory of w's
// exchange for its next request: the handler released it, and no one asked
// to learn of its context's end, which a goroutine could yet report when
// the next request runs.
func (w *response) reusable() bool {
	return w.released && !w.hijacked && !w.ctx.watched()
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(code int) {
	if w.hijacked || w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic("h1: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.informational(code)
		return
	}
	w.wroteHeader, w.status, w.continued = true, code, true
	w.snapshot()
}

// informational sends a 1xx answer with the handler's headers so far.
func (w *response) informational(code int) {
	if code == http.StatusContinue {
		w.sendContinue()
		return
	}
	out := append([]byte(nil), "HTTP/1.1 "...)
	out = appendStatus(out, code)
	keys := sortedKeys(w.header, nil)
	for _, k := range keys {
		out = appendHeader(out, k, w.header[k])
	}
	out = append(out, "\r\n"...)
	if _, err := w.c.io.Write(out); err != nil {
		w.err = err
	}
}

// snapshot writes the handler's headers to c.hdr, but for those that the
// framing of the answer decides, and notes what they say.
func (w *response) snapshot() {
	bodyOK := bodyAllowed(w.status)
	out := w.c.hdr[:0]
	keys := sortedKeys(w.header, w.c.keys[:0])
	for _, k := range keys {
		v := w.header[k]
		switch k {
		case "Content-Length":
			if len(v) == 1 && bodyOK {
				if n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64); err == nil && n >= 0 {
					w.declared = n
				}
			}
			continue
		case "Transfer-Encoding":
			w.teChunked = bodyOK && hasToken(v, "chunked")
			continue
		case "Connection":
			w.connClose = hasToken(v, "close")
			continue
		case "Content-Type":
			if !bodyOK {
				continue
			}
			w.hasType = true
		case "Content-Encoding":
			w.hasEncoding = true
		case "Date":
			w.hasDate = true
		case "Trailer":
			for _, s := range v {
				for name := range strings.SplitSeq(s, ",") {
					if name = http.CanonicalHeaderKey(strings.TrimSpace(name)); name != "" {
						w.trailers = append(w.trailers, name)
					}
				}
			}
		}
		if strings.HasPrefix(k, http.TrailerPrefix) {
			w.anyTrailer = true
			continue
		}
		out = appendHeader(out, k, v)
	}
	w.anyTrailer = w.anyTrailer || len(w.trailers) > 0
	w.c.keys = keys[:0]
	w.c.hdr = out
}

func (w *response) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.err != nil {
		return 0, w.err
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.total+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	w.total += int64(len(p))
	if !w.committed {
		w.body = append(w.body, p...)
		if len(w.body) > bufferLimit {
			w.commit(false)
			w.send()
		}
		return len(p), w.err
	}
	if w.head {
		return len(p), nil
	}
	w.appendBody(p)
	if len(w.c.out) > bufferLimit {
		w.send()
	}
	return len(p), w.err
}

// WriteString spares a copy of s into a []byte.
func (w *response) WriteString(s string) (int, error) {
	if w.wroteHeader && !w.committed && w.err == nil && !w.hijacked && bodyAllowed(w.status) &&
		len(w.body)+len(s) <= bufferLimit && (w.declared < 0 || w.total+int64(len(s)) <= w.declared) {
		w.body = append(w.body, s...)
		w.total += int64(len(s))
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// appendBody adds body bytes after the headers, framed as the response is.
func (w *response) appendBody(p []byte) {
	if len(p) == 0 {
		return
	}
	out := w.c.out
	if w.chunked {
		out = strconv.AppendInt(out, int64(len(p)), 16)
		out = append(out, "\r\n"...)
		out = append(out, p...)
		out = append(out, "\r\n"...)
	} else {
		out = append(out, p...)
	}
	w.c.out = out
}

// FlushError sends what waits (the headers at least) and reports a write
// error; http.ResponseController.Flush calls it.
func (w *response) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(false)
	}
	w.send()
	return w.err
}

// Flush is http.Flusher's.
func (w *response) Flush() { w.FlushError() }

// SetReadDeadline is http.ResponseController's.
func (w *response) SetReadDeadline(t time.Time) error { return w.c.rwc.SetReadDeadline(t) }

// SetWriteDeadline is http.ResponseController's.
func (w *response) SetWriteDeadline(t time.Time) error { return w.c.rwc.SetWriteDeadline(t) }

// EnableFullDuplex is http.ResponseController's: the handler reads its
// request's body while it writes, and what it leaves unread is not read
// for it when the answer starts.
func (w *response) EnableFullDuplex() error {
	w.fullDuplex = true
	return nil
}

// Hijack is http.Hijacker's: what waits is sent first.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.committed {
		w.send()
	}
	rwc, rw, err := w.c.hijack()
	if err == nil {
		w.hijacked = true
	}
	return rwc, rw, err
}

// sendContinue answers Expect: 100-continue, unless the answer started.
func (w *response) sendContinue() {
	if w.continued || w.wroteHeader {
		return
	}
	w.continued = true
	if _, err := w.c.io.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
		w.err = err
	}
}

// finish ends the response once the handler has returned.
func (w *response) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(true)
	}
	if w.chunked {
		w.c.out = append(w.c.out, "0\r\n"...)
		w.c.out = w.appendTrailers(w.c.out)
		w.c.out = append(w.c.out, "\r\n"...)
	}
	if w.declared >= 0 && w.total != w.declared && !w.head {
		w.closeAfter = true // the client cannot tell where this one ends
	}
	w.send()
}

// appendTrailers appends the trailers: the declared names' values and the
// headers named with http.TrailerPrefix, as they are when the handler ends.
func (w *response) appendTrailers(out []byte) []byte {
	for _, k := range w.trailers {
		if v := w.header[k]; len(v) > 0 {
			out = appendHeader(out, k, v)
		}
	}
	for k, v := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			out = appendHeader(out, http.CanonicalHeaderKey(name), v)
		}
	}
	return out
}

// send writes what waits in the connection's buffer.
func (w *response) send() {
	c := w.c
	if len(c.out) > 0 && w.err == nil {
		if _, err := c.io.Write(c.out); err != nil {
			w.err = err
		}
	}
	c.out = c.out[:0]
	if cap(c.out) > 4*bufferLimit {
		c.out = nil // a large answer's buffer is not kept
	}
}

// settleBody reads what the handler left of its request's body before the
// answer starts, as http.Server does, so that the connection can serve the
// next request; where that cannot be (too much, or a client waiting for
// 100 Continue), the answer says the connection closes.
func (w *response) settleBody() {
	b := w.reqBody
	if b == nil || b.done || w.fullDuplex || w.closeAfter {
		return
	}
	if b.expect {
		w.closeAfter = true // the client sends no body before 100 Continue
		return
	}
	w.closeAfter, w.lingerClose = true, true
	if w.req.ContentLength > maxDiscard {
		return
	}
	// A client that trickles what it owes does not hold the answer.
	w.c.rwc.SetReadDeadline(time.Now().Add(discardTimeout))
	n, err := io.CopyN(io.Discard, b, maxDiscard+1)
	if errors.Is(err, io.EOF) && n <= maxDiscard {
		w.closeAfter, w.lingerClose = false, false
	}
}

// commit puts the status line and the headers in the connection's buffer,
// then the body written so far. final: the handler has returned, and the
// body is whole.
func (w *response) commit(final bool) {
	w.committed, w.continued = true, true
	w.settleBody()
	req := w.req
	keepAlive10 := !req.ProtoAtLeast(1, 1) && hasToken(req.Header["Connection"], "keep-alive")
	if req.Close || w.connClose || w.c.srv.closing.Load() || !req.ProtoAtLeast(1, 1) && !keepAlive10 {
		w.closeAfter = true
	}
	status := w.status
	body := w.body
	w.body = nil
	out := append(w.c.out[:0], "HTTP/1.1 "...)
	out = appendStatus(out, status)
	switch {
	case !bodyAllowed(status):
	case w.declared >= 0:
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, w.declared, 10)
		out = append(out, "\r\n"...)
	case final && !w.teChunked && !w.anyTrailer && (!w.head || len(body) > 0):
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, int64(len(body)), 10)
		out = append(out, "\r\n"...)
	case w.head:
	case req.ProtoAtLeast(1, 1):
		w.chunked = true
		out = append(out, "Transfer-Encoding: chunked\r\n"...)
	default:
		w.closeAfter = true // the end of the connection ends the body
	}
	if !w.hasType && !w.hasEncoding && !w.teChunked && bodyAllowed(status) && len(body) > 0 {
		out = append(out, "Content-Type: "...)
		out = append(out, http.DetectContentType(body)...)
		out = append(out, "\r\n"...)
	}
	if !w.hasDate {
		out = appendDate(out)
	}
	if w.closeAfter {
		out = append(out, "Connection: close\r\n"...)
	} else if keepAlive10 {
		out = append(out, "Connection: keep-alive\r\n"...)
	}
	out = append(out, w.c.hdr...)
	out = append(out, "\r\n"...)
	w.c.out = out
	if bodyAllowed(status) && !w.head {
		w.appendBody(body)
	}
	if w.c.bodyBuf = body[:0]; cap(body) > 4*bufferLimit {
		w.c.bodyBuf = nil
	}
}

// appendStatus appends a status line's code and reason, and its end.
func appendStatus(out []byte, status int) []byte {
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	if text := http.StatusText(status); text != "" {
		out = append(out, text...)
	} else {
		out = append(out, "status code "...)
		out = strconv.AppendInt(out, int64(status), 10)
	}
	return append(out, "\r\n"...)
}

// sortedKeys appends the header's names to keys, sorted.
func sortedKeys(h http.Header, keys []string) []string {
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendHeader appends a header's lines: a name that is no token is left
// out, and each value has its line breaks made spaces (they would start a
// header of their own), as http.Header.Write does.
func appendHeader(out []byte, k string, values []string) []byte {
	if !validName(k) {
		return out
	}
	for _, v := range values {
		if strings.ContainsAny(v, "\r\n") {
			v = newlines.Replace(v)
		}
		out = append(out, k...)
		out = append(out, ": "...)
		out = append(out, strings.TrimSpace(v)...)
		out = append(out, "\r\n"...)
	}
	return out
}

var newlines = strings.NewReplacer("\r", " ", "\n", " ")

// bodyAllowed reports whether a response of this status may have a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// hasToken reports whether a comma-separated header holds token.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// validName reports whether a header name is an HTTP token.
func validName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		b := k[i]
		if b <= ' ' || b >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, b) >= 0 {
			return false
		}
	}
	return true
}

// validHost reports whether a Host header holds only what a host and port
// may (RFC 3986, with the bytes http.Server lets through).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		b := h[i]
		ok := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			strings.IndexByte("!$%&'()*+,-.:;=[]_~@", b) >= 0 || b >= 0x80
		if !ok {
			return false
		}
	}
	return true
}

// dateLine is the Date header of one second.
type dateLine struct {
	sec  int64
	line []byte
}

var date atomic.Pointer[dateLine]

// appendDate appends a Date header, made once a second.
func appendDate(out []byte) []byte {
	now := time.Now()
	d := date.Load()
	if d == nil || d.sec != now.Unix() {
		d = &dateLine{sec: now.Unix(), line: []byte("Date: " + now.UTC().Format(http.TimeFormat) + "\r\n")}
		date.Store(d)
	}
	return append(out, d.line...)
}
