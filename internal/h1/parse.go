package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
)

// The request of an MCP client is plain: "POST /mcp HTTP/1.1", a dozen
// headers of letters, digits and dashes, a Content-Length. readPlain reads
// such a request, whole in the connection's buffer, into the http.Request
// that http.ReadRequest would return, with two allocations (its header map
// and the map's slots) where ReadRequest makes about sixteen: its strings
// come from the connection's table (a client sends the same names and
// values again and again), and the request, its URL, its body's reader and
// its headers' slices share the allocation of its response (exchange).
// When the handler released them, they and the header map serve the
// connection's next request, which then allocates nothing. Anything else
// (another version, an escape in the path, a header that is folded,
// repeated where it may not be, or that changes how the request is read:
// Transfer-Encoding, Expect, Connection but for keep-alive, Pragma,
// Trailer) is left to http.ReadRequest, which reads it from the same
// place. FuzzPlainAsReadRequest holds the two to the same result.

// maxPlainHeaders is how many header lines a plain request has at most.
const maxPlainHeaders = 24

// plainRequest is what a plain request is made of.
type plainRequest struct {
	req    http.Request
	url    url.URL
	body   plainBody
	vals   [maxPlainHeaders]string
	header http.Header // req.Header's map, cleared for the next request
}

// readPlain returns the request at the head of br, read into p, when it is
// plain and whole in br's buffer, having read it (but its body); ok false,
// with nothing read or changed, otherwise.
func (c *conn) readPlain(br *bufio.Reader, p *plainRequest) (*http.Request, bool) {
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head := buf[:end+2] // each line with its CRLF
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	method, target, ok := requestLine(line)
	if !ok {
		return nil, false
	}
	// The headers are checked, and split into lines, before anything is
	// made of them.
	var lines [maxPlainHeaders]struct{ name, value []byte }
	n, contentLength, hasLength, hosts := 0, int64(0), false, 0
	for h := rest; len(h) > 0; n++ {
		var l []byte
		l, h, _ = bytes.Cut(h, []byte("\r\n"))
		name, value, ok := headerLine(l)
		if !ok || n == maxPlainHeaders {
			return nil, false
		}
		lines[n].name, lines[n].value = name, value
		switch {
		case nameIs(name, "Content-Length"):
			if hasLength || !digits(value) || len(value) > 18 {
				return nil, false
			}
			hasLength = true
			for _, d := range value {
				contentLength = contentLength*10 + int64(d-'0')
			}
		case nameIs(name, "Host"):
			if hosts++; hosts > 1 {
				return nil, false // ReadRequest's error
			}
		case nameIs(name, "Connection"):
			// HTTP/1.1 keeps the connection unless told to close.
			if !bytes.EqualFold(value, []byte("keep-alive")) {
				return nil, false
			}
		case nameIs(name, "Transfer-Encoding"), nameIs(name, "Expect"), nameIs(name, "Pragma"), nameIs(name, "Trailer"):
			return nil, false
		}
	}
	p.req, p.url = http.Request{}, url.URL{}
	r := &p.req
	r.Method = c.strings.get(method)
	r.RequestURI = c.strings.get(target)
	path, query, _ := bytes.Cut(target, []byte("?"))
	p.url.Path = c.strings.get(path)
	if len(query) > 0 {
		p.url.RawQuery = c.strings.get(query)
	}
	r.URL = &p.url
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	if p.header == nil {
		p.header = make(http.Header, n)
	} else {
		clear(p.header)
	}
	r.Header = p.header
	vals := p.vals[:]
	for _, l := range lines[:n] {
		key := c.strings.key(l.name)
		v := c.strings.get(l.value)
		if key == "Host" {
			r.Host = v // not a header of the request's, as ReadRequest has it
			continue
		}
		if vv, ok := r.Header[key]; ok {
			r.Header[key] = append(vv, v)
			continue
		}
		vals[0] = v
		r.Header[key], vals = vals[:1:1], vals[1:]
	}
	r.ContentLength = contentLength
	r.Body = http.NoBody
	if contentLength > 0 {
		p.body = plainBody{r: br, left: contentLength}
		r.Body = &p.body
	}
	br.Discard(end + 4)
	return r, true
}

// requestLine splits a plain request line: a method of capital letters, a
// path of characters that need no escape with a query of printable ones,
// and HTTP/1.1.
func requestLine(line []byte) (method, target []byte, ok bool) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || string(proto) != "HTTP/1.1" || len(method) == 0 || len(target) == 0 || target[0] != '/' {
		return nil, nil, false
	}
	for _, b := range method {
		if b < 'A' || b > 'Z' {
			return nil, nil, false
		}
	}
	path, query, hasQuery := bytes.Cut(target, []byte("?"))
	if hasQuery && len(query) == 0 {
		return nil, nil, false // ForceQuery: ReadRequest's
	}
	for _, b := range path {
		if !plainPath[b] {
			return nil, nil, false
		}
	}
	for _, b := range query {
		if b <= ' ' || b >= 0x7f || b == '#' {
			return nil, nil, false
		}
	}
	return method, target, true
}

// headerLine splits a plain header line: a name of letters, digits and
// dashes, a colon, and a value of printable characters and tabs, trimmed
// of the spaces and tabs around it.
func headerLine(l []byte) (name, value []byte, ok bool) {
	name, value, ok = bytes.Cut(l, []byte(":"))
	if !ok || len(name) == 0 {
		return nil, nil, false
	}
	for _, b := range name {
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-') {
			return nil, nil, false
		}
	}
	for _, b := range value {
		if (b < ' ' && b != '\t') || b >= 0x7f {
			return nil, nil, false
		}
	}
	return name, bytes.Trim(value, " \t"), true
}

// nameIs reports whether a header's name is name, in any case.
func nameIs(b []byte, name string) bool {
	return len(b) == len(name) && bytes.EqualFold(b, []byte(name))
}

func digits(b []byte) bool {
	for _, d := range b {
		if d < '0' || d > '9' {
			return false
		}
	}
	return len(b) > 0
}

// plainPath are the bytes of a path that url.ParseRequestURI keeps as they
// are, with no RawPath: letters, digits, "-._~" and "$&+,/:;=@".
var plainPath = func() (t [256]bool) {
	for _, b := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~$&+,/:;=@") {
		t[b] = true
	}
	return t
}()

// plainBody is the body of a plain request: the next left bytes of the
// connection, as ReadRequest's reader gives them (io.ErrUnexpectedEOF when
// the connection ends before them).
type plainBody struct {
	r      *bufio.Reader
	left   int64
	closed bool
}

func (b *plainBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		return n, io.EOF
	case err == io.EOF:
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// Close reads what is left of the body, as ReadRequest's reader does, so
// that the next request can be read; reads after it fail.
func (b *plainBody) Close() error {
	if b.closed {
		return nil
	}
	_, err := io.Copy(io.Discard, b)
	b.closed = true
	if err == io.EOF {
		err = nil
	}
	return err
}

// stringTable gives the strings of a connection's requests: the same
// string for the same bytes, made once. It holds at most maxStrings
// strings of maxStringBytes in all (a client that sends new ones at each
// request must not make a connection hold more than that): past either,
// it starts anew.
type stringTable struct {
	m     map[string]string
	keys  map[string]string // canonical header names by the name as sent
	bytes int               // in m and keys
}

const (
	maxStrings     = 256
	maxStringBytes = 16 << 10
)

// get returns b as a string.
func (t *stringTable) get(b []byte) string {
	if s, ok := t.m[string(b)]; ok {
		return s
	}
	s := string(b)
	t.room(len(s))
	t.m[s] = s
	return s
}

// key returns the canonical form of the header name b
// (textproto.CanonicalMIMEHeaderKey).
func (t *stringTable) key(b []byte) string {
	if s, ok := t.keys[string(b)]; ok {
		return s
	}
	canon := make([]byte, len(b))
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		canon[i] = c
		upper = c == '-'
	}
	s := string(canon)
	t.room(2 * len(s))
	t.keys[string(b)] = s
	return s
}

// room makes room for n more bytes, starting the table anew when they do
// not fit.
func (t *stringTable) room(n int) {
	if t.m == nil || len(t.m)+len(t.keys) >= maxStrings || t.bytes+n > maxStringBytes {
		t.m, t.keys, t.bytes = make(map[string]string), make(map[string]string), 0
	}
	t.bytes += n
}
