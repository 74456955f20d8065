package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// plainSeeds are requests as clients send them, and near misses.
var plainSeeds = []string{
	// The go-sdk's and mcp-go's clients (Go's http.Transport).
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 52\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: 4TQZ2FJ6VQ7N\r\nAccept-Encoding: gzip\r\n\r\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nAccept: text/event-stream\r\nLast-Event-Id: 7\r\nMcp-Session-Id: 4TQZ2FJ6VQ7N\r\nAccept-Encoding: gzip\r\n\r\n",
	"DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: s\r\n\r\n",
	// The TypeScript SDK's (Node's fetch): names in lower case.
	"POST /mcp HTTP/1.1\r\nhost: localhost:3000\r\nconnection: keep-alive\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\naccept-language: *\r\nsec-fetch-mode: cors\r\nuser-agent: node\r\naccept-encoding: gzip, deflate\r\ncontent-length: 2\r\n\r\n{}",
	// curl, with a query.
	"POST /mcp?debug=1&x=%41 HTTP/1.1\r\nHost: localhost:3000\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\nContent-Length: 0\r\n\r\n",
	// Pipelined, and a body shorter than declared.
	"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort",
	// Left to ReadRequest, or refused by it.
	"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
	"get / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a%20b HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a? HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET //x/y HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET * HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n",
	"GET / HTTP/1.1\nHost: x\n\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-A:\t one \t\r\nX-a: two\r\nX-Empty:\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-A: caf\xc3\xa9\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\na",
	"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\na",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 007\r\n\r\n1234567",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nTrailer: X\r\nContent-Length: 0\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\n",
	"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
}

// FuzzPlainAsReadRequest holds readPlain to http.ReadRequest: a request
// that readPlain reads is one that ReadRequest reads the same, body and
// what follows included; one that it leaves is left unread. It is read
// into the memory of another request first, as a released one's: nothing
// of that one may remain.
func FuzzPlainAsReadRequest(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add([]byte(s))
	}
	c := &conn{} // one connection for every input: its strings are shared
	const last = "POST /last?q=1 HTTP/1.1\r\nHost: last\r\nX-Last: 1\r\nAccept: a\r\nAccept: b\r\nContent-Length: 2\r\n\r\n{}"
	f.Fuzz(func(t *testing.T, in []byte) {
		p := new(plainRequest)
		lbr := bufio.NewReader(strings.NewReader(last))
		lbr.Peek(1)
		if _, ok := c.readPlain(lbr, p); !ok {
			t.Fatal("the last request is not plain")
		}
		br := bufio.NewReaderSize(bytes.NewReader(in), 4<<10)
		br.Peek(1)
		before := append([]byte(nil), peekAll(br)...)
		got, ok := c.readPlain(br, p)
		if !ok {
			if after := peekAll(br); !bytes.Equal(after, before) {
				t.Fatalf("readPlain left %q, read %q of it", in, before[:len(before)-len(after)])
			}
			return
		}
		assertSameRequest(t, in, got, br)
	})
}

// assertSameRequest compares the request that readPlain read from br, in,
// with the one that ReadRequest reads from in: fields, body and what
// follows.
func assertSameRequest(t *testing.T, in []byte, got *http.Request, br *bufio.Reader) {
	t.Helper()
	wantBR := bufio.NewReader(bytes.NewReader(in))
	want, err := http.ReadRequest(wantBR)
	if err != nil {
		t.Fatalf("readPlain read %q, which ReadRequest refuses: %v", in, err)
	}
	opts := cmp.Options{cmpopts.IgnoreUnexported(http.Request{}), cmpopts.IgnoreFields(http.Request{}, "Body", "GetBody")}
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Fatalf("%q: readPlain's request differs from ReadRequest's (-want +got):\n%s", in, d)
	}
	gotBody, gotErr := io.ReadAll(got.Body)
	wantBody, wantErr := io.ReadAll(want.Body)
	if !bytes.Equal(gotBody, wantBody) || gotErr != wantErr {
		t.Fatalf("%q: body %q (%v), ReadRequest's %q (%v)", in, gotBody, gotErr, wantBody, wantErr)
	}
	if (got.Body == http.NoBody) != (want.Body == http.NoBody) {
		t.Fatalf("%q: body http.NoBody %v, ReadRequest's %v", in, got.Body == http.NoBody, want.Body == http.NoBody)
	}
	gotRest, _ := io.ReadAll(br)
	wantRest, _ := io.ReadAll(wantBR)
	if !bytes.Equal(gotRest, wantRest) {
		t.Fatalf("%q: %q follows, after ReadRequest %q", in, gotRest, wantRest)
	}
}

func peekAll(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// TestPlainSeeds says which of the seeds are plain, so that the fuzz
// target is known to compare requests and not only leave them all.
func TestPlainSeeds(t *testing.T) {
	plain := 0
	c := &conn{}
	for _, s := range plainSeeds {
		br := bufio.NewReaderSize(bytes.NewReader([]byte(s)), 4<<10)
		br.Peek(1)
		got, ok := c.readPlain(br, new(plainRequest))
		if !ok {
			continue
		}
		plain++
		assertSameRequest(t, []byte(s), got, br)
	}
	// The clients' six, pipelined, short body, the tabbed values, keep-alive,
	// a path of two slashes and the leading zeros of a Content-Length.
	if plain != 12 {
		t.Errorf("%d of the seeds are plain, want 12", plain)
	}
}

// TestPlainRequestAllocates counts the allocations of a plain request read
// again on a connection, into the memory of the last (a released
// exchange's): none, as its strings are the connection's and its header
// map is the last one's.
func TestPlainRequestAllocates(t *testing.T) {
	in := []byte(plainSeeds[0])
	c := &conn{}
	p := new(plainRequest)
	r := bytes.NewReader(in)
	br := bufio.NewReaderSize(r, 4<<10)
	read := func() {
		r.Reset(in)
		br.Reset(r)
		br.Peek(1)
		req, ok := c.readPlain(br, p)
		if !ok {
			t.Fatal("the go-sdk client's request is not plain")
		}
		io.Copy(io.Discard, req.Body)
	}
	read()
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("a plain request read into the last one's memory allocates %v times, want none", n)
	}
}

// TestStringTableBounded: a client that sends new header values at each
// request does not make its connection hold more than maxStringBytes of
// them, nor more than maxStrings.
func TestStringTableBounded(t *testing.T) {
	var tab stringTable
	value := bytes.Repeat([]byte("v"), 1000)
	for i := range 1000 {
		copy(value, strconv.Itoa(i))
		if got := tab.get(value); got != string(value) {
			t.Fatalf("get returned %q", got)
		}
		if tab.bytes > maxStringBytes || len(tab.m) > maxStrings {
			t.Fatalf("after %d values the table holds %d bytes in %d strings, want at most %d and %d", i+1, tab.bytes, len(tab.m), maxStringBytes, maxStrings)
		}
	}
	for i := range 1000 {
		tab.get([]byte(strconv.Itoa(i)))
		if len(tab.m)+len(tab.keys) > maxStrings {
			t.Fatalf("after %d short values the table holds %d strings, want at most %d", i+1, len(tab.m)+len(tab.keys), maxStrings)
		}
	}
	if got := tab.key([]byte("mcp-session-ID")); got != "Mcp-Session-Id" {
		t.Errorf("key(mcp-session-ID) = %q, want Mcp-Session-Id", got)
	}
}
