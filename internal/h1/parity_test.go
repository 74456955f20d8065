package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// parity_test.go checks that h1.Server answers as net/http's http.Server
// does: the same raw request bytes go to both, serving the same handler,
// and what comes back is compared.

// parityMaxHeaderBytes is both servers' MaxHeaderBytes: either reads at most
// this plus 4096 bytes of a request's line and headers.
const parityMaxHeaderBytes = 1024

// parityCase is one request (or a few, in one write) sent to both servers.
type parityCase struct {
	name string
	// req is written at once; or parts are written in turn, pause apart.
	req   string
	parts []string
	pause time.Duration
	// methods has the method of each answer expected, in order; nil means
	// one answer to a GET.
	methods []string
	handler http.HandlerFunc
	// readHeaderTimeout is both servers' ReadHeaderTimeout (0: none).
	readHeaderTimeout time.Duration
	// h1, where h1 legitimately answers otherwise than net/http, turns what
	// net/http answered into what h1 must answer; its comment says why.
	h1 func(ex *parityExchange)
	// check, when set, makes more assertions on h1's exchange.
	check func(t *testing.T, ex parityExchange)
}

// parityExchange is what a server sent back on one connection.
type parityExchange struct {
	Answers []parityAnswer
	// Rest is what came after the answers expected, once the client had
	// half-closed the connection, until the server closed it (RestErr: how
	// the read ended, "EOF" for a clean close).
	Rest    string
	RestErr string
}

// parityAnswer is one response, with what http.ReadResponse made of it.
type parityAnswer struct {
	Err           string       // ReadResponse's error, if it failed
	Informational []parityInfo // 1xx answers before it
	Proto         string
	Status        string
	// Header has the Date header's value replaced by "(present)".
	Header           http.Header
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Body             string // or its length and hash, when long
	BodyErr          string
	Trailer          http.Header
}

type parityInfo struct {
	Status string
	Header http.Header
}

// parityLog is a log destination safe for concurrent use.
type parityLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *parityLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *parityLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// parityText is n bytes of text, the same for the same n.
func parityText(n int) string {
	const line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// parityErr names an error without the addresses that differ from one
// connection to the next.
func parityErr(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return err.Error()
}

// parityBody is a body as compared: itself when short, else its length and
// hash (a diff of 100 KiB helps no one).
func parityBody(b []byte) string {
	if len(b) <= 512 {
		return string(b)
	}
	return fmt.Sprintf("(%d bytes, sha256 %x)", len(b), sha256.Sum256(b))
}

// parityStart serves h on an h1.Server and on an http.Server, configured
// alike, and returns their addresses and error logs.
func parityStart(t *testing.T, c parityCase) (h1Addr, netAddr string, h1Log, netLog *parityLog) {
	t.Helper()
	h1Log, netLog = &parityLog{}, &parityLog{}
	hs := &Server{
		Handler:           c.handler,
		MaxHeaderBytes:    parityMaxHeaderBytes,
		ReadHeaderTimeout: c.readHeaderTimeout,
		ErrorLog:          log.New(h1Log, "", 0),
	}
	ns := &http.Server{
		Handler:           c.handler,
		MaxHeaderBytes:    parityMaxHeaderBytes,
		ReadHeaderTimeout: c.readHeaderTimeout,
		ErrorLog:          log.New(netLog, "", 0),
	}
	l1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		l1.Close()
		t.Fatal(err)
	}
	go hs.Serve(l1)
	go ns.Serve(l2)
	t.Cleanup(func() {
		hs.Close()
		ns.Close()
	})
	return l1.Addr().String(), l2.Addr().String(), h1Log, netLog
}

// parityExchangeWith sends the case's request to addr and reads what comes
// back: the answers expected, then, the client having half-closed the
// connection, whatever else until the server closes it.
func parityExchangeWith(t *testing.T, addr string, c parityCase) parityExchange {
	var ex parityExchange
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Errorf("dial %s: %v", addr, err)
		return ex
	}
	defer conn.Close()
	// A bound on the whole exchange, not a timed assertion: a server that
	// hangs shows as a "timeout" in what it answered.
	conn.SetDeadline(time.Now().Add(15 * time.Second))

	parts := c.parts
	if parts == nil {
		parts = []string{c.req}
	}
	written := make(chan struct{})
	go func() { // a server may answer before it has read it all
		defer close(written)
		for i, p := range parts {
			if i > 0 {
				time.Sleep(c.pause)
			}
			if _, err := io.WriteString(conn, p); err != nil {
				return
			}
		}
	}()

	methods := c.methods
	if methods == nil {
		methods = []string{http.MethodGet}
	}
	br := bufio.NewReader(conn)
	for _, m := range methods {
		a := parityRead(br, m)
		ex.Answers = append(ex.Answers, a)
		if a.Err != "" {
			break
		}
	}
	<-written
	conn.(*net.TCPConn).CloseWrite()
	rest, err := io.ReadAll(br)
	ex.Rest, ex.RestErr = parityBody(rest), parityErr(err)
	if err == nil {
		ex.RestErr = "EOF"
	}
	return ex
}

// parityRead reads one final answer, and the 1xx answers before it.
func parityRead(br *bufio.Reader, method string) parityAnswer {
	var a parityAnswer
	for {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			a.Err = parityErr(err)
			return a
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			a.Informational = append(a.Informational, parityInfo{resp.Status, resp.Header})
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if _, ok := resp.Header["Date"]; ok {
			resp.Header["Date"] = []string{"(present)"}
		}
		a.Proto = resp.Proto
		a.Status = resp.Status
		a.Header = resp.Header
		a.ContentLength = resp.ContentLength
		a.TransferEncoding = resp.TransferEncoding
		a.Close = resp.Close
		a.Body = parityBody(body)
		a.BodyErr = parityErr(err)
		a.Trailer = resp.Trailer
		return a
	}
}

// Handlers of the cases.

func paritySmall(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Handler", "small")
	w.Header().Add("X-Multi", "one")
	w.Header().Add("X-Multi", "two")
	io.WriteString(w, "hello, world\n")
}

// parityPath answers with the request's path: which request it answers.
func parityPath(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Path", r.URL.Path)
	io.WriteString(w, "path "+r.URL.Path+"\n")
}

// parityEcho answers with the request's body.
func parityEcho(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	w.Header().Set("X-Request-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Path", r.URL.Path)
	if err != nil {
		w.Header().Set("X-Read-Error", parityErr(err))
	}
	w.Write(b)
}

// parityInspect answers with the request as the handler sees it.
func parityInspect(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	fmt.Fprintf(w, "method=%s uri=%s proto=%s host=%s contentLength=%d transferEncoding=%q close=%v\n",
		r.Method, r.RequestURI, r.Proto, r.Host, r.ContentLength, r.TransferEncoding, r.Close)
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		fmt.Fprintf(w, "header %s=%q\n", k, r.Header[k])
	}
	fmt.Fprintf(w, "body=%q err=%v trailer=%q\n", b, parityErr(err), r.Trailer)
}

func parityCases() []parityCase {
	const get = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
	big := parityText(100 << 10)
	// Headers that fit in what both servers read of a request's head
	// (MaxHeaderBytes + 4096 = 5120 bytes) but leave less than 4 KiB of it:
	// the body that follows in the same write is read ahead with them.
	nearLimit := "POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2000\r\n"
	for i := 0; len(nearLimit) < 4400; i++ {
		nearLimit += fmt.Sprintf("X-Pad-%02d: %s\r\n", i, strings.Repeat("p", 60))
	}
	nearLimit += "\r\n" + parityText(2000)

	// httpOnePointOne is what h1 answers to an HTTP/1.0 request where
	// net/http answers HTTP/1.0: h1 always answers HTTP/1.1, as RFC 9110
	// §6.2 asks of a server (the highest minor version it conforms to);
	// net/http echoes the request's version. The rest is the same: h1 then
	// says Connection: close, which http.ReadResponse turns into Close (and
	// takes out of the header) as it does for an HTTP/1.0 answer without
	// keep-alive.
	httpOnePointOne := func(ex *parityExchange) {
		for i := range ex.Answers {
			if ex.Answers[i].Proto == "HTTP/1.0" {
				ex.Answers[i].Proto = "HTTP/1.1"
			}
		}
	}

	return []parityCase{
		{
			name:    "small body",
			req:     get,
			handler: paritySmall,
		},
		{
			name: "no body written",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Handler", "empty")
			},
		},
		{
			name: "204",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Handler", "204")
				w.WriteHeader(http.StatusNoContent)
			},
		},
		{
			name: "HEAD of a handler that writes a body",
			// RFC 9110 §9.3.2: the same header fields as for a GET;
			// net/http counts and sniffs what the handler wrote.
			req:     "HEAD / HTTP/1.1\r\nHost: example.com\r\n\r\n",
			methods: []string{http.MethodHead},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Handler", "head")
				io.WriteString(w, "hello, world\n")
			},
		},
		{
			name:    "HEAD then GET on one connection",
			req:     "HEAD / HTTP/1.1\r\nHost: example.com\r\n\r\n" + get,
			methods: []string{http.MethodHead, http.MethodGet},
			handler: paritySmall,
		},
		{
			name: "flushes between writes",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				rc := http.NewResponseController(w)
				w.Header().Set("X-Handler", "flush")
				io.WriteString(w, "first\n")
				rc.Flush()
				io.WriteString(w, "second\n")
				rc.Flush()
				io.WriteString(w, "third\n")
			},
		},
		{
			name: "100 KiB in one write",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, big)
			},
		},
		{
			name: "100 KiB in 1 KiB writes",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				for s := big; s != ""; s = s[min(len(s), 1024):] {
					io.WriteString(w, s[:min(len(s), 1024)])
				}
			},
		},
		{
			name: "100 KiB in 7-byte writes",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				for s := big; s != ""; s = s[min(len(s), 7):] {
					w.Write([]byte(s[:min(len(s), 7)]))
				}
			},
		},
		{
			name: "10 KiB in one write",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, big[:10<<10])
			},
			// By design h1 holds up to 32 KiB of a body until the
			// handler returns or flushes, and sends it with its
			// Content-Length; net/http holds 2 KiB, and chunks what
			// goes beyond while the handler runs. Same body, framed
			// otherwise.
			h1: func(ex *parityExchange) {
				a := &ex.Answers[0]
				a.TransferEncoding = nil
				a.ContentLength = 10 << 10
				a.Header.Set("Content-Length", strconv.Itoa(10<<10))
			},
		},
		{
			name: "handler sets Content-Length",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "13")
				io.WriteString(w, "hello, world\n")
			},
		},
		{
			name: "handler sets Content-Length of a long body",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(len(big)))
				io.WriteString(w, big)
			},
		},
		{
			name: "handler writes less than its Content-Length",
			req:  get + get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "20")
				io.WriteString(w, "short")
			},
		},
		{
			name:    "handler writes more than its Content-Length",
			req:     get + get,
			methods: []string{http.MethodGet, http.MethodGet},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "5")
				// net/http refuses this write whole (http.ErrContentLength).
				io.WriteString(w, "hello, world\n")
			},
		},
		{
			name: "http.Error",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "99") // http.Error drops it
				http.Error(w, "x", http.StatusBadRequest)
			},
		},
		{
			name: "WriteHeader called twice",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusAccepted)
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, "accepted\n")
			},
		},
		{
			name: "status without a text",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(599)
				io.WriteString(w, "odd\n")
			},
		},
		{
			name: "Content-Type unset: sniffed html",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "<!DOCTYPE html><html><body>hi</body></html>")
			},
		},
		{
			name: "Content-Type unset: sniffed png",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
			},
		},
		{
			name: "Content-Type unset with a Content-Encoding: not sniffed",
			// net/http does not sniff an encoded body (Go issue 31753).
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				io.WriteString(w, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcbH\xcd\xc9\xc9\x07\x00\x86\xa6\x106\x05\x00\x00\x00")
			},
		},
		{
			name: "header value with a newline, name not a token",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Evil", "a\r\nX-Injected: 1")
				w.Header().Set("X-Evil-Lf", "b\nX-Injected-Lf: 2")
				w.Header()["X-Bad\r\nX-Injected-Name"] = []string{"3"}
				w.Header()["Bad Name"] = []string{"4"}
				io.WriteString(w, "ok\n")
			},
			check: func(t *testing.T, ex parityExchange) {
				if len(ex.Answers) == 0 {
					return
				}
				for k := range ex.Answers[0].Header {
					if strings.HasPrefix(k, "X-Injected") || k == "Bad Name" {
						t.Errorf("h1 sent header %q: a handler's header value or name made a header of its own", k)
					}
				}
			},
		},
		{
			name: "header set after WriteHeader",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Early", "1")
				w.WriteHeader(http.StatusOK)
				// http.ResponseWriter: "Changing the header map after a
				// call to WriteHeader (or Write) has no effect".
				w.Header().Set("X-Late", "1")
				w.Header().Set("Content-Type", "text/x-late")
				io.WriteString(w, "body\n")
			},
		},
		{
			name: "header set after Write",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "body\n")
				w.Header().Set("X-Late", "1")
			},
		},
		{
			name: "trailers",
			// Declared trailers (and http.TrailerPrefix ones) make
			// net/http chunk the answer and send them after the body.
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Trailer", "X-Sum")
				io.WriteString(w, "body\n")
				w.Header().Set("X-Sum", "42")
				w.Header().Set(http.TrailerPrefix+"X-Undeclared", "7")
			},
		},
		{
			name: "103 Early Hints with a Link",
			// net/http sends the header map with a 1xx (RFC 8297).
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</style.css>; rel=preload; as=style")
				w.WriteHeader(http.StatusEarlyHints)
				io.WriteString(w, "body\n")
			},
		},
		{
			name: "204 with a Content-Length set by the handler",
			// RFC 9110 §8.6: no Content-Length in a 204; net/http drops
			// it (and Content-Type as well from a 304).
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "0")
				w.WriteHeader(http.StatusNoContent)
			},
		},
		{
			name: "304 with a Content-Type and Content-Length set by the handler",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Header().Set("Content-Length", "13")
				w.Header().Set("Etag", `"x"`)
				w.WriteHeader(http.StatusNotModified)
			},
		},
		{
			name: "handler sets Transfer-Encoding: chunked",
			// net/http honours a handler's choice of chunking.
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Transfer-Encoding", "chunked")
				io.WriteString(w, "body\n")
			},
		},
		{
			name: "handler sets Connection: close",
			req:  get + get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Connection", "close")
				io.WriteString(w, "bye\n")
			},
		},
		{
			name:    "POST with a Content-Length body, echoed",
			req:     "POST /echo HTTP/1.1\r\nHost: example.com\r\nContent-Length: 12\r\n\r\nhello, world",
			methods: []string{http.MethodPost},
			handler: parityEcho,
		},
		{
			name:    "POST with a chunked body, echoed",
			req:     "POST /echo HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n",
			methods: []string{http.MethodPost},
			handler: parityEcho,
		},
		{
			name:    "POST with a chunked body and trailer, as the handler sees it",
			req:     "POST /in?q=1 HTTP/1.1\r\nHost: example.com\r\nTrailer: X-T\r\nX-Multi: a\r\nX-Multi: b\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: end\r\n\r\n",
			methods: []string{http.MethodPost},
			handler: parityInspect,
		},
		{
			name:    "HTTP/1.0",
			req:     "GET / HTTP/1.0\r\n\r\n",
			handler: paritySmall,
			h1:      httpOnePointOne,
		},
		{
			name:    "HTTP/1.0 with Host, as the handler sees it",
			req:     "GET /x HTTP/1.0\r\nHost: example.com\r\n\r\n",
			handler: parityInspect,
			h1:      httpOnePointOne,
		},
		{
			name: "HTTP/1.0 answered by flushes",
			req:  "GET / HTTP/1.0\r\n\r\n",
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "first\n")
				http.NewResponseController(w).Flush()
				io.WriteString(w, "second\n")
			},
			h1: httpOnePointOne,
		},
		{
			name:    "HTTP/1.0 with Connection: keep-alive, twice",
			req:     "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
			methods: []string{http.MethodGet, http.MethodGet},
			handler: parityPath,
			// net/http keeps an HTTP/1.0 connection that asks for
			// keep-alive (answering "Connection: keep-alive" with a
			// Content-Length), and answers both; the status line's
			// version aside, h1 must too.
			h1: httpOnePointOne,
		},
		{
			name:    "two pipelined requests in one write",
			req:     "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\nGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n",
			methods: []string{http.MethodGet, http.MethodGet},
			handler: parityPath,
		},
		{
			name:    "three pipelined requests of mixed kinds",
			req:     "POST /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nabcHEAD /b HTTP/1.1\r\nHost: example.com\r\n\r\nPOST /c HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
			methods: []string{http.MethodPost, http.MethodHead, http.MethodPost},
			handler: parityEcho,
		},
		{
			// Handlers that outrun WatchAfter: h1 then reads the
			// connection while they run, and must keep what it read of
			// the next request.
			name:    "slow handlers, three pipelined requests",
			req:     "POST /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: example.com\r\n\r\nPOST /c HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nyz\r\n0\r\n\r\n",
			methods: []string{http.MethodPost, http.MethodGet, http.MethodPost},
			handler: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				select {
				case <-time.After(4 * WatchAfter):
				case <-r.Context().Done():
				}
				fmt.Fprintf(w, "%s %q context: %v\n", r.URL.Path, b, r.Context().Err())
			},
		},
		{
			name:    "Connection: close, then a request that must not be answered",
			req:     "GET /a HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n",
			handler: parityPath,
		},
		{
			name:    "malformed request line",
			req:     "GARBAGE\r\n\r\n",
			handler: paritySmall,
		},
		{
			name:    "request line without a version",
			req:     "GET /\r\n\r\n",
			handler: paritySmall,
		},
		{
			name: "headers beyond MaxHeaderBytes",
			// The server stops reading with some of the request
			// unread: net/http half-closes and waits before closing, so
			// that its answer is not lost to a reset.
			req:     "GET / HTTP/1.1\r\nHost: example.com\r\nX-Big: " + strings.Repeat("b", 8<<10) + "\r\n\r\n",
			handler: paritySmall,
		},
		{
			name: "headers near MaxHeaderBytes followed by a body in the same write",
			// Headers within the limit: the bytes read ahead with them
			// (the body) may reach the limit; only a request that does
			// not parse within it is too large.
			req:     nearLimit,
			methods: []string{http.MethodPost},
			handler: func(w http.ResponseWriter, r *http.Request) {
				n, err := io.Copy(io.Discard, r.Body)
				fmt.Fprintf(w, "read %d bytes, err %v\n", n, err)
			},
		},
		{
			name:    "HTTP/1.1 without Host",
			req:     "GET / HTTP/1.1\r\n\r\n",
			handler: paritySmall,
		},
		{
			name: "malformed Host header",
			// net/http refuses a Host that httpguts.ValidHostHeader
			// refuses.
			req:     "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
			handler: paritySmall,
		},
		{
			name:    "two Host headers",
			req:     "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
			handler: parityInspect,
		},
		{
			name: "CONNECT without Host",
			// net/http requires Host of HTTP/1.1 requests but CONNECT.
			req:     "CONNECT example.com:443 HTTP/1.1\r\n\r\n",
			methods: []string{http.MethodConnect},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Host", r.Host)
				w.WriteHeader(http.StatusOK)
			},
		},
		{
			name:    "request header value with a control byte",
			req:     "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: a\x01b\r\n\r\n",
			handler: paritySmall,
		},
		{
			name:    "unsupported Transfer-Encoding",
			req:     "POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: gzip\r\n\r\n",
			handler: parityEcho,
		},
		{
			name:    "HTTP/2.0 request line",
			req:     "GET / HTTP/2.0\r\nHost: example.com\r\n\r\n",
			handler: paritySmall,
		},
		{
			name: "Expect other than 100-continue",
			// net/http answers 417 without calling the handler.
			req:     "GET / HTTP/1.1\r\nHost: example.com\r\nExpect: the-unexpected\r\n\r\n",
			handler: paritySmall,
		},
		{
			name:    "small body not read, then a second request",
			req:     "POST /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n",
			methods: []string{http.MethodPost, http.MethodGet},
			handler: parityPath,
		},
		{
			name:    "small chunked body not read, then a second request",
			req:     "POST /a HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n",
			methods: []string{http.MethodPost, http.MethodGet},
			handler: parityPath,
		},
		{
			name: "POST body followed by a stray CRLF, then a second request",
			// RFC 9112 §2.2: a server SHOULD ignore an empty line before
			// a request line; net/http does after a POST.
			req:     "POST /a HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello\r\nGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n",
			methods: []string{http.MethodPost, http.MethodGet},
			handler: parityEcho,
		},
		{
			name: "body of 300 KiB not read",
			// Beyond the 256 KiB net/http reads for a handler that left
			// its body: it says Connection: close before it closes.
			req:     "POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 307200\r\n\r\n" + strings.Repeat("z", 300<<10),
			methods: []string{http.MethodPost},
			handler: parityPath,
		},
		{
			name: "Expect: 100-continue, body not read",
			// No 100 Continue went, so the client may not send the body:
			// net/http says Connection: close, and closes.
			req:     "POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
			methods: []string{http.MethodPost},
			handler: parityPath,
		},
		{
			name:    "Expect: 100-continue, body read",
			parts:   []string{"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", "hello"},
			methods: []string{http.MethodPost},
			handler: parityEcho,
		},
		{
			name: "body sent after ReadHeaderTimeout",
			// ReadHeaderTimeout bounds the headers only: net/http lifts
			// the read deadline once they are read.
			parts:             []string{"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhel", "lo"},
			pause:             600 * time.Millisecond,
			readHeaderTimeout: 200 * time.Millisecond,
			methods:           []string{http.MethodPost},
			handler:           parityEcho,
		},
		{
			name: "request's context holds the local address",
			// http.LocalAddrContextKey: net/http sets it for every
			// request. (http.ServerContextKey holds an *http.Server,
			// which h1 cannot give; it is not compared.)
			req: get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				_, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
				fmt.Fprintf(w, "LocalAddrContextKey set: %v\n", ok)
			},
		},
		{
			name: "handler panics before writing",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				panic("parity: deliberate panic")
			},
		},
		{
			name: "handler panics after a flush",
			req:  get,
			handler: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "partial\n")
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler)
			},
		},
	}
}

// TestAnswersAsNetHTTP sends each case's raw bytes to an h1.Server and to
// an http.Server serving the same handler, and compares what each sent
// back: status, headers (Date's value aside), framing, close, body,
// trailers, 1xx answers, and whatever followed them. Where h1 legitimately
// answers otherwise, the case's h1 func (with its reason) says what it
// must answer instead.
func TestAnswersAsNetHTTP(t *testing.T) {
	for _, c := range parityCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h1Addr, netAddr, h1Log, netLog := parityStart(t, c)
			var want, got parityExchange
			var wg sync.WaitGroup
			wg.Go(func() { want = parityExchangeWith(t, netAddr, c) })
			wg.Go(func() { got = parityExchangeWith(t, h1Addr, c) })
			wg.Wait()
			if c.h1 != nil && len(want.Answers) > 0 && !slices.ContainsFunc(want.Answers, func(a parityAnswer) bool { return a.Err != "" }) {
				c.h1(&want)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("h1 answered %q otherwise than net/http (-net/http +h1):\n%s", c.name, diff)
				t.Logf("net/http's log:\n%s\nh1's log:\n%s", netLog, h1Log)
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
}

// parityEchoHandler echoes a request's body, its length and its X-Id.
var parityEchoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Echo-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Echo-Id", r.Header.Get("X-Id"))
	w.Write(b)
})

func TestRealClients(t *testing.T) {
	t.Run("keep-alive client, 20 goroutines × 100 POSTs", func(t *testing.T) {
		var conns atomic.Int64
		logs := &parityLog{}
		url := "http://" + serve(t, &Server{
			Handler:  parityEchoHandler,
			ErrorLog: log.New(logs, "", 0),
			ConnState: func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			},
		})
		tr := &http.Transport{MaxIdleConnsPerHost: 20}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr, Timeout: time.Minute}
		const goroutines, posts = 20, 100
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range posts {
					id := fmt.Sprintf("g%02d-i%03d", g, i)
					n := (g*posts + i) * 131 % 2000
					if i%10 == 0 {
						n = 30<<10 + (g*posts+i)*37%(10<<10) // some beyond h1's 32 KiB buffer
					}
					body := id + ":" + parityText(n)
					req, err := http.NewRequest(http.MethodPost, url+"/echo/"+id, strings.NewReader(body))
					if err != nil {
						t.Error(err)
						return
					}
					req.Header.Set("X-Id", id)
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("POST %s: %v", id, err)
						return
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Errorf("POST %s: reading the answer: %v", id, err)
						return
					}
					if resp.StatusCode != http.StatusOK {
						t.Errorf("POST %s: status %s, want 200 OK", id, resp.Status)
					}
					if h := resp.Header.Get("X-Echo-Id"); h != id {
						t.Errorf("POST %s: answered with X-Echo-Id %q: another request's answer", id, h)
					}
					if h := resp.Header.Get("X-Echo-Length"); h != strconv.Itoa(len(body)) {
						t.Errorf("POST %s: X-Echo-Length %q, want %d", id, h, len(body))
					}
					if string(got) != body {
						t.Errorf("POST %s: body of %d bytes differs from the %d sent (%s, want %s)", id, len(got), len(body), parityBody(got), parityBody([]byte(body)))
					}
					if t.Failed() {
						return
					}
				}
			})
		}
		wg.Wait()
		// Keep-alive: each goroutine's requests go over a connection it
		// keeps; a few more may be opened while one is in flight.
		if n := conns.Load(); n > 4*goroutines {
			t.Errorf("%d connections for %d requests of %d goroutines: keep-alive does not hold", n, goroutines*posts, goroutines)
		}
		if s := logs.String(); s != "" {
			t.Errorf("server logged:\n%s", s)
		}
	})

	t.Run("Expect 100-continue from http.Client", func(t *testing.T) {
		url := "http://" + serve(t, &Server{Handler: parityEchoHandler, ErrorLog: log.New(io.Discard, "", 0)})
		// Without a 100 Continue the client sends the body after
		// ExpectContinueTimeout anyway; the trace tells the two apart.
		tr := &http.Transport{ExpectContinueTimeout: time.Second}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr, Timeout: time.Minute}
		body := parityText(64 << 10)
		var seq, got100, wrote atomic.Int64
		trace := &httptrace.ClientTrace{
			Got100Continue: func() { got100.Store(seq.Add(1)) },
			WroteRequest:   func(httptrace.WroteRequestInfo) { wrote.Store(seq.Add(1)) },
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, url+"/expect", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("X-Id", "expect")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("POST with Expect: 100-continue: %v", err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		elapsed := time.Since(start)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		if resp.StatusCode != http.StatusOK || string(got) != body || resp.Header.Get("X-Echo-Length") != strconv.Itoa(len(body)) {
			t.Errorf("answer %s, X-Echo-Length %q, body %s; want 200 OK echoing the %d bytes sent", resp.Status, resp.Header.Get("X-Echo-Length"), parityBody(got), len(body))
		}
		if got100.Load() == 0 {
			t.Errorf("the client got no 100 Continue")
		} else if w := wrote.Load(); w != 0 && w < got100.Load() {
			t.Errorf("the client sent the body before the 100 Continue came: it waited out ExpectContinueTimeout")
		}
		if elapsed >= tr.ExpectContinueTimeout {
			t.Errorf("the answer took %v, not under the ExpectContinueTimeout of %v", elapsed, tr.ExpectContinueTimeout)
		}
	})

	t.Run("Expect 100-continue on the wire", func(t *testing.T) {
		url := "http://" + serve(t, &Server{Handler: parityEchoHandler, ErrorLog: log.New(io.Discard, "", 0)})
		conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(15 * time.Second))
		body := parityText(64 << 10)
		head := fmt.Sprintf("POST /expect HTTP/1.1\r\nHost: example.com\r\nX-Id: raw\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for 100 Continue: %v", err)
		}
		if line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("first line of the answer %q, want %q", line, "HTTP/1.1 100 Continue\r\n")
		}
		if end, err := br.ReadString('\n'); err != nil || end != "\r\n" {
			t.Fatalf("100 Continue ended with %q (%v), want an empty line", end, err)
		}
		if _, err := io.WriteString(conn, body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the final answer: %v", err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the final answer's body: %v", err)
		}
		if resp.StatusCode != http.StatusOK || string(got) != body || resp.Header.Get("X-Echo-Id") != "raw" {
			t.Errorf("final answer %s, X-Echo-Id %q, body %s; want 200 OK echoing the %d bytes sent", resp.Status, resp.Header.Get("X-Echo-Id"), parityBody(got), len(body))
		}
	})
}

// parityMethods parses data as requests, as far as it can, and returns
// their methods: what a HEAD's answer is depends on it.
func parityMethods(data []byte) []string {
	var methods []string
	br := bufio.NewReader(bytes.NewReader(data))
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return methods
		}
		methods = append(methods, req.Method)
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return methods
		}
	}
}

func FuzzServerNeverHangs(f *testing.F) {
	for _, c := range parityCases() {
		f.Add([]byte(c.req + strings.Join(c.parts, "")))
	}
	for _, s := range []string{
		"",
		"\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n",
		"GET /flush HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"POST /flush HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabcHEAD / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}

	logs := &parityLog{}
	srv := &Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Read", strconv.FormatInt(n, 10))
			if err != nil {
				w.Header().Set("X-Read-Error", parityErr(err))
			}
			io.WriteString(w, "ok\n")
			if r.URL.Path == "/flush" {
				http.NewResponseController(w).Flush()
				io.WriteString(w, "flushed\n")
			}
		}),
		ReadHeaderTimeout: 200 * time.Millisecond,
		MaxHeaderBytes:    256,
		ErrorLog:          log.New(logs, "", 0),
	}
	addr := strings.TrimPrefix("http://"+serve(f, srv), "http://")

	f.Fuzz(func(t *testing.T, data []byte) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		tc := conn.(*net.TCPConn)
		defer tc.Close()
		conn.SetDeadline(time.Now().Add(2 * time.Second))
		go func() {
			tc.Write(data) // the server may close before it has read it all
			tc.CloseWrite()
		}()
		out, err := io.ReadAll(conn)
		switch {
		case err == nil, errors.Is(err, syscall.ECONNRESET):
			// Closed: with a reset when it had not read all of data.
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.Fatalf("server neither answered nor closed within 2s; it sent %q for %q", out, data)
		default:
			t.Fatalf("reading the answers: %v", err)
		}

		methods := parityMethods(data)
		br := bufio.NewReader(bytes.NewReader(out))
		for n := 0; ; {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			method := http.MethodGet
			if n < len(methods) {
				method = methods[n]
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				t.Fatalf("answer %d does not parse: %v\nsent %q\ngot %q", n+1, err, data, out)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("answer %d (%s): body does not parse: %v\nsent %q\ngot %q", n+1, resp.Status, err, data, out)
			}
			if resp.StatusCode < 200 {
				continue
			}
			n++
			if resp.Close {
				// The last answer. A refusal of a request the server
				// could not read (400, 431, 501) has a body up to the
				// close even where the request was a HEAD, as net/http's
				// has; anything else after it is bytes the client would
				// take for another answer.
				if rest, _ := io.ReadAll(br); len(rest) > 0 && method != http.MethodHead {
					t.Fatalf("answer %d (%s) says Connection: close, yet %q follows it\nsent %q\ngot %q", n, resp.Status, rest, data, out)
				}
				break
			}
		}
		if s := logs.String(); strings.Contains(s, "panic") {
			t.Fatalf("server logged a panic:\n%s", s)
		}
	})
}
