package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// gatedMatcher is the default matcher, a Keyer (so matching finds requests
// by key and never calls Match), whose Match of a request carrying
// "documents" (only explaining such a miss calls it) first calls gate.
type gatedMatcher struct{ gate func() }

func (g gatedMatcher) Key(r matcher.Request) string { return matcher.Default().(matcher.Keyer).Key(r) }

func (g gatedMatcher) Match(recorded, live matcher.Request) matcher.Result {
	if bytes.Contains(live.Params, []byte(`"documents"`)) {
		g.gate()
	}
	return matcher.Default().Match(recorded, live)
}

// missCassetteText is missCassette(n) as cassette text, after an
// initialize.
func missCassetteText(t *testing.T, n int) string {
	t.Helper()
	c, err := cassettes.Parse("init.json", []byte(cassette(initialize)))
	if err != nil {
		t.Fatal(err)
	}
	c.Interactions = append(c.Interactions, missCassette(n).Interactions...)
	b, err := cassettes.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMissDoesNotHoldTheConnection: on stdio, a ping sent after a request
// that matches nothing is answered while the miss is still being
// explained (the explanation waits here until the ping's answer came).
func TestMissDoesNotHoldTheConnection(t *testing.T) {
	recycle := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(recycle) }) }
	t.Cleanup(free)
	w, _ := serveCassette(t, missCassetteText(t, 20), &Options{Matcher: gatedMatcher{gate: func() { <-recycle }}})
	w.send(string(missRequest(256<<10, "docs")))
	w.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if m := w.recv(); m["id"] != "ping" || m["result"] == nil {
		t.Fatalf("first answer %v, want the ping's", m)
	}
	free() // the explanation goes on
	m := w.recv()
	if m["id"] != float64(1) || m["error"] == nil {
		t.Fatalf("second answer %.300v, want the miss's error", m)
	}
}

// TestMissStopsWhenTheClientLeaves: over HTTP, the explanation of a miss
// stops when the client goes away: the matcher is not called again after
// the request's context ended.
func TestMissStopsWhenTheClientLeaves(t *testing.T) {
	const recorded = 20
	var calls atomic.Int32
	entered := make(chan struct{})
	reqCtx := make(chan context.Context, 1)
	gate := func() {
		if calls.Add(1) == 1 {
			close(entered)
			<-(<-reqCtx).Done()
		}
	}
	c, err := cassettes.Parse("test.json", []byte(missCassetteText(t, recorded)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, &Options{Matcher: gatedMatcher{gate: gate}})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	handled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 100<<10 {
			reqCtx <- r.Context()
			defer close(handled)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	u := srv.URL + "/mcp"
	init := do(t, "POST", u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", init.status, init.body)
	}

	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "POST", u, bytes.NewReader(missRequest(256<<10, "docs")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	cancel() // the client leaves while the miss is explained
	if err := <-done; err == nil {
		t.Errorf("the cancelled request got an answer")
	}
	<-handled
	if n := calls.Load(); n != 1 {
		t.Errorf("the matcher was called %d times to explain the miss, want 1: the explanation went on after the client left", n)
	}
}

// TestLargeMissExplained: a miss of a 1 MB request against many recorded
// calls still names the method, the tool, the closest recorded call and
// how it differs, in a bounded answer, and its hint works.
func TestLargeMissExplained(t *testing.T) {
	e, err := New(missCassette(1000), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range []string{"docs", "text"} {
		t.Run(shape, func(t *testing.T) {
			raw := missRequest(1<<20, shape)
			msg, err := jsonrpc.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			var onMiss []Miss
			e.opts.OnMiss = func(m Miss) { onMiss = append(onMiss, m) }
			plan := e.newSession().plan(msg)
			m := plan.Miss
			if m == nil || m.Method != "tools/call" || m.Tool != "search" || len(m.Candidates) == 0 {
				t.Fatalf("miss %+v, want one of tools/call search with candidates", m)
			}
			// Interaction 4 was recorded with the same query, limit and
			// filters: it differs by the documents only.
			if c := m.Candidates[0]; c.Interaction != 4 || len(c.Differences) != 1 || !strings.HasPrefix(c.Differences[0], "arguments.documents: not recorded, live has ") {
				t.Errorf("closest %d %q, want interaction 4 and the documents", c.Interaction, c.Differences)
			}
			if !strings.HasSuffix(m.Candidates[0].Diff, truncated[:len(truncated)-1]+": long values are shown cut, with their size and a hash of the rest)") {
				t.Errorf("the diff does not say it was cut:\n%s", m.Candidates[0].Diff)
			}
			answer := plan.response()
			if len(answer) > 32<<10 || !bytes.Contains(answer, []byte(`closest is interaction 4`)) {
				t.Errorf("the answer (%d bytes) does not say the closest: %.300s", len(answer), answer)
			}
			if len(onMiss) != 1 || len(onMiss[0].Candidates) == 0 {
				t.Errorf("OnMiss got %d misses (%+v), want the explained one", len(onMiss), onMiss)
			}
			if shape == "docs" {
				// The hint, applied, accepts the request in full.
				if !strings.Contains(m.Hint, "--match-ignore arguments.documents") {
					t.Fatalf("hint %q", m.Hint)
				}
				loose, err := matcher.WithConfig(nil, &matcher.Config{Ignore: []string{"arguments.documents"}})
				if err != nil {
					t.Fatal(err)
				}
				rec := e.requests[m.Candidates[0].pos].req
				if !loose.Match(rec, matcher.Request{Method: msg.Method, Params: msg.Params}).Match {
					t.Errorf("the hinted rule does not accept the request")
				}
			}
		})
	}
}

// TestMissDifferencesBounded: a request that differs in many places lists
// maxDifferences of them and says that it cut the rest.
func TestMissDifferencesBounded(t *testing.T) {
	var recorded, live []string
	for i := range 50 {
		recorded = append(recorded, `"k`+itoa(i)+`":1`)
		live = append(live, `"k`+itoa(i)+`":2`)
	}
	w, _ := serveCassette(t, cassette(call(1, "wide", "{"+strings.Join(recorded, ",")+"}", text("r"))), nil)
	w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wide","arguments":{` + strings.Join(live, ",") + `}}}`)
	m := w.recv()
	var data struct {
		Candidates []Candidate `json:"candidates"`
	}
	raw, _ := json.Marshal(m["error"].(map[string]any)["data"])
	if err := json.Unmarshal(raw, &data); err != nil || len(data.Candidates) != 1 {
		t.Fatalf("data %s: %v", raw, err)
	}
	d := data.Candidates[0].Differences
	if len(d) != maxDifferences+1 || d[maxDifferences] != "30 more differences (diff truncated)" {
		t.Errorf("%d differences, ending %q; want %d and a note of the 30 cut", len(d), d[len(d)-1], maxDifferences)
	}
}

// On the HTTP+SSE transport the answer goes on the event stream: the POST
// that carries a miss is answered 202 while the miss is still being
// explained, and the explained answer follows on the stream.
func TestSSEMissDoesNotHoldThePOST(t *testing.T) {
	recycle := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	gate := func() {
		once.Do(func() {
			close(entered)
			<-recycle
		})
	}
	c, err := cassettes.Parse("test.json", []byte(missCassetteText(t, 20)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, &Options{Matcher: gatedMatcher{gate: gate}})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	sc := dialSSE(t, srv.URL)
	data := func() string {
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return d
			}
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return ""
	}
	endpoint := srv.URL + "/" + data()
	post := func(body []byte) int {
		resp, err := http.Post(endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)); got != 202 {
		t.Fatalf("initialize: %d", got)
	}
	data()
	posted := make(chan int, 1)
	go func() { posted <- post(missRequest(256<<10, "docs")) }()
	<-entered
	// The explanation is held at its first comparison; the POST must
	// not wait for it.
	if got := <-posted; got != 202 {
		t.Errorf("POST of the miss: %d, want 202", got)
	}
	close(recycle)
	if d := data(); !strings.Contains(d, `"code":-32010`) || !strings.Contains(d, "closest") {
		t.Errorf("stream carried %.300s, want the explained miss", d)
	}
}

// TestMissHidesSecrets: what a miss shows of both requests (its message,
// differences and diff, in the error the client gets and to OnMiss) hides
// what the default rules know, as the live log and the cassette do: a
// member under a secret name, in the live request and in a recorded one
// that a cassette saved without the rules holds, and a token's text. The
// differences still name each path that differs.
func TestMissHidesSecrets(t *testing.T) {
	secrets := []string{"recorded-key-1", "live-key-2", "sk-live-abcdefghijklmnopqrstuvwxyz0123"}
	var misses []Miss
	var mu sync.Mutex
	w, _ := serveCassette(t, cassette(call(1, "login", `{"user":"ann","apiKey":"recorded-key-1","note":"x"}`, text("ok"))),
		&Options{OnMiss: func(m Miss) { mu.Lock(); misses = append(misses, m); mu.Unlock() }})
	w.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"login","arguments":{"user":"bob","apiKey":"live-key-2","note":"sk-live-abcdefghijklmnopqrstuvwxyz0123"}}}`)
	m := w.recv()
	answer, _ := json.Marshal(m)
	mu.Lock()
	defer mu.Unlock()
	if len(misses) != 1 {
		t.Fatalf("OnMiss got %d misses, want 1", len(misses))
	}
	miss := misses[0]
	for _, shown := range []string{string(answer), miss.Report()} {
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				t.Errorf("%q is shown: %s", s, shown)
			}
		}
	}
	if len(miss.Candidates) != 1 {
		t.Fatalf("candidates %+v, want 1", miss.Candidates)
	}
	got := strings.Join(miss.Candidates[0].Differences, "; ")
	for _, want := range []string{`arguments.apiKey: recorded "[REDACTED]", live "[REDACTED]"`, `arguments.note: recorded "x", live "[REDACTED]"`, `arguments.user: recorded "ann", live "bob"`} {
		if !strings.Contains(got, want) {
			t.Errorf("differences %q, want %q among them", got, want)
		}
	}
	if d := miss.Candidates[0].Diff; !strings.Contains(d, `"bob"`) || !strings.Contains(d, cassettes.Redacted) {
		t.Errorf("diff %q, want the user's names and the redactions", d)
	}
}
