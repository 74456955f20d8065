package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestReleasedExchange: a request whose handler released it (Release) is
// read into the same memory as the connection's next one, which the
// handler finds whole and its own: its method, path, headers (none of the
// last one's), body and a live context. A request that was not released,
// or whose context someone watched, is not used again, and what its
// handler kept of it stays as it was.
func TestReleasedExchange(t *testing.T) {
	type seen struct {
		req     *http.Request
		method  string
		path    string
		headers string
		body    string
		ctxErr  error
	}
	var kept []seen
	var keptDone <-chan struct{}
	got := make(chan seen, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var names []string
		for k, v := range r.Header {
			names = append(names, k+"="+strings.Join(v, ","))
		}
		slices.Sort(names)
		v := seen{req: r, method: r.Method, path: r.URL.Path, headers: strings.Join(names, " "), body: string(b), ctxErr: r.Context().Err()}
		switch {
		case strings.HasPrefix(r.URL.Path, "/keep"):
			kept = append(kept, v)
		case strings.HasPrefix(r.URL.Path, "/done"):
			keptDone = r.Context().Done()
			Release(w)
		default:
			Release(w)
		}
		got <- v
		io.WriteString(w, "ok")
	}), ErrorLog: log.New(io.Discard, "", 0)}
	c := dial(t, serve(t, s))
	br := bufio.NewReader(c)
	type step struct {
		method, path, headers, body string
		sameAsLast                  bool // the request is the last one's memory
	}
	steps := []step{
		{"POST", "/a", "X-A: 1\r\nX-Shared: a", `{"a":1}`, false},
		{"POST", "/b", "X-B: 2", `{"b":22}`, true},
		{"GET", "/c", "X-Shared: c\r\nX-Shared: c2", "", true},
		{"POST", "/keep", "X-Keep: k", `{"keep":"this"}`, true},
		{"POST", "/d", "X-D: 4", `{"d":4}`, false}, // the kept one is not used again
		{"POST", "/done", "X-E: 5", `{}`, true},
		{"POST", "/f", "X-F: 6", `{"f":6}`, false}, // its context was watched
		{"POST", "/g", "", `{"g":7}`, true},
	}
	var last *http.Request
	for i, st := range steps {
		req := st.method + " " + st.path + " HTTP/1.1\r\nHost: x\r\n"
		if st.headers != "" {
			req += st.headers + "\r\n"
		}
		if st.body != "" {
			req += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(st.body)) + "\r\n"
		}
		io.WriteString(c, req+"\r\n"+st.body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", st.path, err)
		}
		io.ReadAll(resp.Body)
		v := <-got
		var want []string
		for _, l := range strings.Split(st.headers, "\r\n") {
			if k, val, ok := strings.Cut(l, ": "); ok {
				want = append(want, k+"="+val)
			}
		}
		if st.body != "" {
			want = append(want, "Content-Length="+strconv.Itoa(len(st.body)), "Content-Type=application/json")
		}
		wantHeaders := joinMerged(want)
		if v.method != st.method || v.path != st.path || v.headers != wantHeaders || v.body != st.body || v.ctxErr != nil {
			t.Errorf("request %d: the handler found %s %s [%s] %q (context %v), want %s %s [%s] %q (context live)",
				i, v.method, v.path, v.headers, v.body, v.ctxErr, st.method, st.path, wantHeaders, st.body)
		}
		if same := v.req == last; i > 0 && same != st.sameAsLast {
			t.Errorf("request %d (%s): in the last request's memory %v, want %v", i, st.path, same, st.sameAsLast)
		}
		last = v.req
	}
	k := kept[0]
	if k.req.Method != "POST" || k.req.URL.Path != "/keep" || k.req.Header.Get("X-Keep") != "k" || len(k.req.Header) != 3 || k.req.Context().Err() == nil {
		t.Errorf("the request a handler kept reads %s %s %v (context %v) after later requests, want POST /keep with its headers, its context ended",
			k.req.Method, k.req.URL.Path, k.req.Header, k.req.Context().Err())
	}
	select {
	case <-keptDone:
	default:
		t.Error("the Done channel of a request whose handler returned is still open")
	}
}

// joinMerged joins header lines k=v the way the handler above lists a
// header map: the values of one name together, names sorted.
func joinMerged(lines []string) string {
	m := map[string][]string{}
	var keys []string
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = append(m[k], v)
	}
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+strings.Join(m[k], ","))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestReleasedExchangeAllocates counts the allocations of a request on a
// connection whose handler releases each: none, once the connection's
// strings are known.
func TestReleasedExchangeAllocates(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		Release(w)
		w.Header()["Content-Type"] = jsonType
		w.Write(answer)
	}), ErrorLog: log.New(io.Discard, "", 0)}
	c := dial(t, serve(t, s))
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`
	req := []byte(fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	buf := make([]byte, 4096)
	call := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		for n := 0; ; {
			m, err := c.Read(buf[n:])
			if err != nil {
				t.Fatal(err)
			}
			n += m
			if i := bytes.Index(buf[:n], []byte("\r\n\r\n")); i >= 0 && n >= i+4+len(answer) {
				return
			}
		}
	}
	for range 10 {
		call()
	}
	if n := testing.AllocsPerRun(200, call); n > 0 {
		t.Errorf("a released request allocates %v times, want none", n)
	}
}

var (
	jsonType = []string{"application/json"}
	answer   = []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
)
