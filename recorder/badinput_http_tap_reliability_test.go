package recorder

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// httpTapCase is one bad POST: its body, and its Content-Type and Accept
// headers ("" is the usual value, "-" leaves the header out).
type httpTapCase struct {
	name           string
	body           string
	contentType    string
	accept         string
	noSession      bool
	parallelWithMe bool // sent at the same time as the case before it
}

func httpTapCatalogue() []httpTapCase {
	var cases []httpTapCase
	for _, tc := range tapCatalogue() {
		if strings.HasPrefix(tc.name, "a duplicate") {
			continue
		}
		cases = append(cases, httpTapCase{name: tc.name, body: tc.line})
	}
	dup := func(text string) string {
		return `{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	}
	return append(cases,
		httpTapCase{name: "a duplicate in-flight id (1)", body: dup("one")},
		httpTapCase{name: "a duplicate in-flight id (2)", body: dup("two"), parallelWithMe: true},
		httpTapCase{name: "a body that is not JSON", body: "hello, server", contentType: "text/plain"},
		httpTapCase{name: "a wrong content type", body: `{"jsonrpc":"2.0","id":"ct","method":"ping"}`, contentType: "text/plain"},
		httpTapCase{name: "no content type", body: `{"jsonrpc":"2.0","id":"noct","method":"ping"}`, contentType: "-"},
		httpTapCase{name: "a missing Accept", body: `{"jsonrpc":"2.0","id":"acc","method":"ping"}`, accept: "-"},
		httpTapCase{name: "Accept without text/event-stream", body: `{"jsonrpc":"2.0","id":"acc2","method":"ping"}`, accept: "application/json"},
		httpTapCase{name: "no session id", body: `{"jsonrpc":"2.0","id":"nosid","method":"ping"}`, noSession: true},
		httpTapCase{name: "a body with a newline at its end", body: `{"jsonrpc":"2.0","id":"nl","method":"ping"}` + "\n"},
	)
}

// exchangeSeen is one exchange as one side saw it.
type exchangeSeen struct {
	Body        []byte
	ContentType []string
	Accept      []string
	Status      int
	Answer      []byte
}

// teeHandler is the upstream server with a record of every exchange
// marked with X-Case.
type teeHandler struct {
	h  http.Handler
	mu sync.Mutex // guards seen
	// seen maps a case's name to the exchange as the upstream saw it.
	seen map[string]exchangeSeen
}

func (t *teeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get("X-Case")
	if name == "" {
		t.h.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	cw := &captureWriter{ResponseWriter: w}
	t.h.ServeHTTP(cw, r)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[name] = exchangeSeen{Body: body, ContentType: r.Header.Values("Content-Type"), Accept: r.Header.Values("Accept"), Status: cw.status, Answer: cw.body.Bytes()}
}

type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body.Write(p)
	return c.ResponseWriter.Write(p)
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *captureWriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// TestBadInputThroughHTTPTap throws the catalogue at the HTTP tap, in a
// session of its own, in front of a real go-sdk server, while a real go-sdk
// client runs its session through the same tap. The upstream keeps what it
// received and answered: the tap must pass the bodies and the headers that
// decide the answer unchanged, and the answers unchanged.
func TestBadInputThroughHTTPTap(t *testing.T) {
	ctx := testCtx(t)
	h, err := testpeer.HTTPHandler(testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	tee := &teeHandler{h: h, seen: map[string]exchangeSeen{}}
	up := httptest.NewServer(tee)
	t.Cleanup(up.Close)
	direct, err := testpeer.RunGoSDKHTTP(ctx, up.URL+"/mcp", testpeer.HTTPOptions{})
	if err != nil {
		t.Fatalf("direct: %v", err)
	}

	path := filepath.Join(t.TempDir(), "c.json")
	rec, err := New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tap, err := NewHTTP(up.URL+"/mcp", rec, &HTTPOptions{MaxMessage: tapRecordLimit()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(tap)
	t.Cleanup(ts.Close)
	u := ts.URL + "/mcp"

	// The real client, beside the catalogue.
	type result struct {
		tr  testpeer.Transcript
		err error
	}
	real := make(chan result, 1)
	go func() {
		tr, err := testpeer.RunGoSDKHTTP(ctx, u, testpeer.HTTPOptions{})
		real <- result{tr, err}
	}()

	post := func(name, sid, body, ct, accept string) exchangeSeen {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
		if ct != "-" {
			req.Header.Set("Content-Type", cmpOr(ct, "application/json"))
		}
		if accept != "-" {
			req.Header.Set("Accept", cmpOr(accept, "application/json, text/event-stream"))
		}
		if name != "" {
			req.Header.Set("X-Case", name)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return exchangeSeen{}
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Errorf("%s: reading the answer: %v", name, err)
		}
		if name == "" {
			answer = []byte(resp.Header.Get("Mcp-Session-Id"))
		}
		return exchangeSeen{Body: []byte(body), ContentType: req.Header.Values("Content-Type"), Accept: req.Header.Values("Accept"), Status: resp.StatusCode, Answer: answer}
	}
	sid := string(post("", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`, "", "").Answer)
	if sid == "" {
		t.Fatal("no session for the hostile client")
	}
	post("initialized", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "")

	catalogue := httpTapCatalogue()
	sent := map[string]exchangeSeen{}
	var mu sync.Mutex
	for i := 0; i < len(catalogue); {
		// A case and those sent at the same time as it.
		j := i + 1
		for j < len(catalogue) && catalogue[j].parallelWithMe {
			j++
		}
		var wg sync.WaitGroup
		for _, tc := range catalogue[i:j] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := sid
				if tc.noSession {
					s = ""
				}
				got := post(tc.name, s, tc.body, tc.contentType, tc.accept)
				mu.Lock()
				sent[tc.name] = got
				mu.Unlock()
			}()
		}
		wg.Wait()
		i = j
	}
	// The hostile session goes on.
	after := post("after", sid, `{"jsonrpc":"2.0","id":"after","method":"ping"}`, "", "")
	if msg, err := jsonrpc.Parse(bytes.TrimSpace(after.Answer)); after.Status != http.StatusOK || err != nil || msg.Result == nil {
		t.Errorf("a ping after the catalogue: %d %q", after.Status, after.Answer)
	}
	r := <-real
	if r.err != nil {
		t.Fatalf("the real client through the tap: %v", r.err)
	}
	if diff := cmp.Diff(direct, r.tr); diff != "" {
		t.Errorf("the real client saw something else beside the catalogue (-direct +tapped):\n%s", diff)
	}

	tee.mu.Lock()
	defer tee.mu.Unlock()
	for _, tc := range catalogue {
		client, upstream := sent[tc.name], tee.seen[tc.name]
		t.Logf("%s: %d %.100s", tc.name, upstream.Status, upstream.Answer)
		if upstream.Status == 0 {
			t.Errorf("%s: never reached the upstream", tc.name)
			continue
		}
		if !bytes.Equal(client.Body, upstream.Body) {
			t.Errorf("%s: the upstream received %.100q, the client sent %.100q", tc.name, upstream.Body, client.Body)
		}
		if !cmp.Equal(client.ContentType, upstream.ContentType) || !cmp.Equal(client.Accept, upstream.Accept) {
			t.Errorf("%s: the upstream got Content-Type %q Accept %q, the client sent %q %q", tc.name, upstream.ContentType, upstream.Accept, client.ContentType, client.Accept)
		}
		if client.Status != upstream.Status || !bytes.Equal(client.Answer, upstream.Answer) {
			t.Errorf("%s: the client got %d %.100q, the upstream answered %d %.100q", tc.name, client.Status, client.Answer, upstream.Status, upstream.Answer)
		}
	}

	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []tapCase
	for _, tc := range catalogue {
		lines = append(lines, tapCase{tc.name, strings.TrimSpace(tc.body)})
	}
	checkCatalogueRecorded(t, rec.Cassette(), lines, httpNote)
	if _, err := cassettes.Load(path); err != nil {
		t.Errorf("the saved cassette does not load: %v", err)
	}
}

// httpNote is the HTTP tap's note of a body over the limit.
func httpNote(body string) string {
	limit := tapRecordLimit()
	if limit == 0 {
		limit = jsonrpc.DefaultMaxLine
	}
	return fmt.Sprintf("[mcpmock: a body of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", len(body), limit)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
