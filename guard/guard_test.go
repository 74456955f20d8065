package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

const listResult = `{"jsonrpc":"2.0","id":1,"result":{"tools":[
 {"name":"read","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"rm","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
 {"name":"temp","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"c":{"type":"number"}},"required":["c"]}}
],"nextCursor":"p2"}}`

func newGuard(t *testing.T, o *Options) *Guard {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func callMsg(id int, tool, args string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": json.RawMessage(args)}})
	return b
}

func list(t *testing.T, g *Guard) []string {
	t.Helper()
	v := g.FromClient("", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if v.Forward == nil {
		t.Fatal("tools/list not forwarded")
	}
	out := g.FromServer("", []byte(listResult))
	var res struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Forward, &res); err != nil {
		t.Fatal(err)
	}
	if res.Result.NextCursor != "p2" {
		t.Errorf("the page lost its cursor: %s", out.Forward)
	}
	var names []string
	for _, tl := range res.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestListFiltered(t *testing.T) {
	for _, tc := range []struct {
		allow, deny []string
		want        string
	}{
		{nil, nil, "read,rm,temp"},
		{nil, []string{"r*"}, "temp"},
		{[]string{"r*"}, []string{"rm"}, "read"},
		{nil, []string{"*"}, ""},
	} {
		g := newGuard(t, &Options{Allow: tc.allow, Deny: tc.deny})
		if got := strings.Join(list(t, g), ","); got != tc.want {
			t.Errorf("allow %v deny %v: listed %q, want %q", tc.allow, tc.deny, got, tc.want)
		}
	}
}

func TestDestructiveNeedsTrust(t *testing.T) {
	for _, trust := range []bool{false, true} {
		g := newGuard(t, &Options{Confirm: []string{Destructive}, TrustServer: trust})
		list(t, g)
		held := map[string]bool{}
		for i, tool := range []string{"read", "rm", "temp", "unlisted"} {
			held[tool] = g.FromClient("", callMsg(10+i, tool, `{}`)).Hold != nil
		}
		want := map[string]bool{"read": !trust, "rm": true, "temp": true, "unlisted": true}
		for tool, w := range want {
			if held[tool] != w {
				t.Errorf("trust %v: %s held = %v, want %v", trust, tool, held[tool], w)
			}
		}
	}
}

func TestOutputSchemaWithheld(t *testing.T) {
	var audit bytes.Buffer
	g := newGuard(t, &Options{Audit: &audit})
	list(t, g)
	for _, tc := range []struct {
		result, want string
	}{
		{`{"content":[],"structuredContent":{"c":21}}`, ""},
		{`{"content":[],"structuredContent":{"c":"hot"}}`, "does not match the tool's outputSchema: /c: got string, want number"},
		{`{"content":[]}`, "has no structuredContent"},
		{`{"content":[{"type":"text","text":"down"}],"isError":true}`, ""},
	} {
		g.FromClient("", callMsg(7, "temp", `{}`))
		raw := []byte(`{"jsonrpc":"2.0","id":7,"result":` + tc.result + `}`)
		v := g.FromServer("", raw)
		if tc.want == "" {
			if !bytes.Equal(v.Forward, raw) {
				t.Errorf("%s: changed to %s", tc.result, v.Forward)
			}
			continue
		}
		if !strings.Contains(string(v.Forward), tc.want) || !strings.Contains(string(v.Forward), `"isError":true`) {
			t.Errorf("%s: forwarded %s, want a tool error with %q", tc.result, v.Forward, tc.want)
		}
	}
	if n := strings.Count(audit.String(), `"decision":"result-withheld"`); n != 2 {
		t.Errorf("audit has %d withheld results, want 2:\n%s", n, audit.String())
	}
}

func TestTimeoutAndLateAnswer(t *testing.T) {
	g := newGuard(t, &Options{CallTimeout: time.Second})
	v := g.FromClient("s", callMsg(3, "slow", `{}`))
	if v.Timeout != time.Second || v.Expire == nil {
		t.Fatalf("verdict %+v: no timeout", v)
	}
	toClient, toServer := v.Expire()
	if !strings.Contains(string(toClient), `"id":3`) || !strings.Contains(string(toClient), "did not answer within 1s") {
		t.Errorf("to the client: %s", toClient)
	}
	if len(toServer) != 1 || !strings.Contains(string(toServer[0]), `"method":"notifications/cancelled"`) || !strings.Contains(string(toServer[0]), `"requestId":3`) {
		t.Errorf("to the server: %s", toServer)
	}
	if late := g.FromServer("s", []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)); late.Forward != nil {
		t.Errorf("the late answer was forwarded: %s", late.Forward)
	}
	// Answered in time: nothing to expire.
	v = g.FromClient("s", callMsg(4, "slow", `{}`))
	g.FromServer("s", []byte(`{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`))
	if c, s := v.Expire(); c != nil || s != nil {
		t.Errorf("expired an answered call: %s %q", c, s)
	}
}

func TestRateLimitWindow(t *testing.T) {
	now := time.Unix(1000, 0)
	rl, err := ParseRateLimit("get_*=2/m")
	if err != nil {
		t.Fatal(err)
	}
	g := newGuard(t, &Options{RateLimits: []RateLimit{rl}, Now: func() time.Time { return now }})
	refused := func() bool { return g.FromClient("", callMsg(1, "get_weather", `{}`)).Reply != nil }
	if refused() || refused() || !refused() {
		t.Fatal("want two calls allowed, the third refused")
	}
	now = now.Add(61 * time.Second)
	if refused() {
		t.Error("refused after the window passed")
	}
}

func TestBatchDeniedElement(t *testing.T) {
	g := newGuard(t, &Options{Deny: []string{"rm"}, Confirm: []string{"ask"}})
	batch := []byte(`[` + string(callMsg(1, "rm", `{}`)) + `,` + string(callMsg(2, "ok", `{}`)) + `,` + string(callMsg(3, "ask", `{}`)) + `]`)
	v := g.FromClient("", batch)
	if strings.Contains(string(v.Forward), `"rm"`) || !strings.Contains(string(v.Forward), `"ok"`) || strings.Contains(string(v.Forward), `"ask"`) {
		t.Errorf("forwarded %s, want only ok", v.Forward)
	}
	if !strings.Contains(string(v.Reply), `-32602`) || !strings.Contains(string(v.Reply), "in a batch cannot") {
		t.Errorf("replied %s", v.Reply)
	}
}

// fakePrompter answers from a channel.
type fakePrompter struct{ answers chan bool }

func (f fakePrompter) Confirm(ctx context.Context, c Call) (bool, error) { return <-f.answers, nil }

func (f fakePrompter) ConfirmChange(ctx context.Context, c Change) (bool, error) {
	return <-f.answers, nil
}

func TestHoldResolves(t *testing.T) {
	p := fakePrompter{make(chan bool, 2)}
	g := newGuard(t, &Options{Confirm: []string{"rm"}, Prompter: p})
	p.answers <- false
	msg := callMsg(5, "rm", `{"path":"/"}`)
	v := g.FromClient("", msg).Hold(t.Context())
	if v.Forward != nil || !strings.Contains(string(v.Reply), "declined at the terminal") {
		t.Errorf("declined: %+v", v)
	}
	p.answers <- true
	v = g.FromClient("", msg).Hold(t.Context())
	if !bytes.Equal(v.Forward, msg) {
		t.Errorf("allowed: forwarded %s, want the call as sent", v.Forward)
	}
}

// silentPrompter never answers: it waits for its context.
type silentPrompter struct{ asked chan string }

func (s silentPrompter) Confirm(ctx context.Context, c Call) (bool, error) {
	s.asked <- c.Tool
	<-ctx.Done()
	return false, ctx.Err()
}

func (s silentPrompter) ConfirmChange(ctx context.Context, c Change) (bool, error) {
	s.asked <- c.Tool
	<-ctx.Done()
	return false, ctx.Err()
}

// TestConfirmTimeout: a question no one answers denies the call when
// ConfirmTimeout passes, with a tool error that says so and an audit line
// decided by "timeout"; a call waiting in line behind it has its own
// time limit.
func TestConfirmTimeout(t *testing.T) {
	var audit bytes.Buffer // written by the held calls before their verdicts are received
	p := silentPrompter{make(chan string, 2)}
	g := newGuard(t, &Options{Confirm: []string{"rm"}, Prompter: p, ConfirmTimeout: 50 * time.Millisecond, Audit: &audit})
	first, second := make(chan Verdict), make(chan Verdict)
	go func() { first <- g.FromClient("", callMsg(1, "rm", `{}`)).Hold(t.Context()) }()
	if tool := <-p.asked; tool != "rm" {
		t.Fatalf("asked about %q", tool)
	}
	go func() { second <- g.FromClient("", callMsg(2, "rm", `{}`)).Hold(t.Context()) }()
	for i, v := range []Verdict{<-first, <-second} {
		if v.Forward != nil || !strings.Contains(string(v.Reply), "timed out") || !strings.Contains(string(v.Reply), `"isError":true`) ||
			!strings.Contains(string(v.Reply), fmt.Sprintf(`"id":%d`, i+1)) {
			t.Errorf("call %d: %+v (reply %s), want a tool error saying the confirmation timed out", i+1, v, v.Reply)
		}
	}
	if n := strings.Count(audit.String(), `"decision":"deny","by":"timeout"`); n != 2 {
		t.Errorf("audit has %d denials by timeout, want 2:\n%s", n, audit.String())
	}
}

// TestListChangedOwnList: after notifications/tools/list_changed the guard
// asks the server itself, follows nextCursor, keeps the answers from the
// client, and uses the new annotations and forgets removed tools.
func TestListChangedOwnList(t *testing.T) {
	var logs bytes.Buffer
	g := newGuard(t, &Options{Confirm: []string{Destructive}, TrustServer: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	list(t, g) // read is read-only, rm destructive
	if g.FromClient("", callMsg(2, "read", `{}`)).Hold != nil {
		t.Fatal("read-only tool held before the change")
	}
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	v := g.FromServer("", note)
	if !bytes.Equal(v.Forward, note) || v.ToServer == nil {
		t.Fatalf("list_changed: %+v, want it forwarded and a tools/list to the server", v)
	}
	req, err := jsonrpc.Parse(v.ToServer)
	if err != nil || req.Method != "tools/list" || !strings.HasPrefix(string(req.ID), `"mcpmock-guard-`) {
		t.Fatalf("the guard's own request %s (%v)", v.ToServer, err)
	}
	// Page 1: read is now destructive.
	page1 := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"read","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}],"nextCursor":"c2"}}`, req.ID)
	v = g.FromServer("", []byte(page1))
	if v.Forward != nil || v.ToServer == nil {
		t.Fatalf("page 1: %+v, want it kept from the client and the next page asked", v)
	}
	req2, _ := jsonrpc.Parse(v.ToServer)
	if req2.ID == req.ID || !strings.Contains(string(v.ToServer), `"cursor":"c2"`) {
		t.Fatalf("next page request %s", v.ToServer)
	}
	page2 := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"new","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`, req2.ID)
	if v = g.FromServer("", []byte(page2)); v.Forward != nil || v.ToServer != nil {
		t.Fatalf("page 2: %+v, want it kept and nothing more asked", v)
	}
	if g.FromClient("", callMsg(3, "read", `{}`)).Hold == nil {
		t.Error("read, destructive since the change, is not held")
	}
	if g.FromClient("", callMsg(4, "new", `{}`)).Hold != nil {
		t.Error("new, read-only, is held")
	}
	for _, want := range []string{"⚑ tool new: read-only", "⚑ tool read: destructive", "⚑ tool rm: no longer exposed", "⚑ tool temp: no longer exposed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestOwnListMeta2026: the guard's own tools/list (each page) carries the
// per-request _meta of 2026-07-28 of the subscriptions/listen whose stream
// brought the list_changed, else that of the client's latest request, and
// none in the stateful era; other _meta keys (a logLevel, a progress
// token) are not copied.
func TestOwnListMeta2026(t *testing.T) {
	meta := func(client string) string {
		return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"` + client +
			`","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","progressToken":7}`
	}
	ownMeta := func(t *testing.T, req []byte) string {
		t.Helper()
		var m struct {
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(req, &m); err != nil {
			t.Fatal(err)
		}
		if m.Params.Meta == nil {
			return ""
		}
		if _, ok := m.Params.Meta["io.modelcontextprotocol/logLevel"]; ok || m.Params.Meta["progressToken"] != nil {
			t.Errorf("the guard's own request copied more than the protocol fields: %s", req)
		}
		return string(m.Params.Meta["io.modelcontextprotocol/clientInfo"])
	}
	for _, tc := range []struct {
		name, note, want string
	}{
		{"the listen stream's", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}`, `{"name":"listener","version":"1"}`},
		{"the latest request's", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, `{"name":"latest","version":"1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuard(t, nil)
			g.FromClient("", []byte(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"_meta":`+meta("listener")+`,"notifications":{"toolsListChanged":true}}}`))
			g.FromClient("", []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":`+meta("latest")+`}}`))
			v := g.FromServer("", []byte(tc.note))
			if got := ownMeta(t, v.ToServer); got != tc.want {
				t.Errorf("own tools/list %s: clientInfo %s, want %s", v.ToServer, got, tc.want)
			}
			req, _ := jsonrpc.Parse(v.ToServer)
			next := g.FromServer("", []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"nextCursor":"c2"}}`, req.ID)))
			if got := ownMeta(t, next.ToServer); got != tc.want || !strings.Contains(string(next.ToServer), `"cursor":"c2"`) {
				t.Errorf("next page %s: clientInfo %s, want %s", next.ToServer, got, tc.want)
			}
		})
	}
	// The stateful era: no _meta.
	g := newGuard(t, nil)
	g.FromClient("", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`))
	if v := g.FromServer("", []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); strings.Contains(string(v.ToServer), "_meta") {
		t.Errorf("own tools/list of the stateful era = %s, want no _meta", v.ToServer)
	}
	// A client that probed with server/discover (2026-07-28) and fell back
	// to initialize speaks the stateful era: no _meta (a stateful server
	// refuses a request of 2026-07-28 on its session).
	g = newGuard(t, nil)
	g.FromClient("", []byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":`+meta("prober")+`}}`))
	g.FromClient("", []byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"prober","version":"1"}}}`))
	if v := g.FromServer("", []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)); strings.Contains(string(v.ToServer), "_meta") {
		t.Errorf("own tools/list after a probe and initialize = %s, want no _meta", v.ToServer)
	}
}

// TestBatchCallTimeout: the calls of a batch share one clock; when it runs
// out, the calls the server has not answered are answered together, as a
// batch of timeout errors, and each is cancelled upstream with a
// notification of its own; the answered one keeps its answer.
func TestBatchCallTimeout(t *testing.T) {
	g := newGuard(t, &Options{CallTimeout: time.Second, Deny: []string{"rm"}})
	batch := []byte(`[` + string(callMsg(1, "slow", `{}`)) + `,` + string(callMsg(2, "quick", `{}`)) + `,` + string(callMsg(3, "hung", `{}`)) + `,` + string(callMsg(4, "rm", `{}`)) + `]`)
	v := g.FromClient("", batch)
	if v.Timeout != time.Second || v.Expire == nil {
		t.Fatalf("batch verdict %+v: no clock", v)
	}
	if fwd := g.FromServer("", []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}`)); fwd.Forward == nil {
		t.Fatal("the answer in time was not forwarded")
	}
	toClient, toServer := v.Expire()
	elems, _, err := jsonrpc.SplitBatch(toClient)
	if err != nil || len(elems) != 2 || !strings.Contains(string(elems[0]), `"id":1`) || !strings.Contains(string(elems[1]), `"id":3`) ||
		!strings.Contains(string(toClient), `tool \"hung\" did not answer within 1s`) {
		t.Errorf("to the client: %s (%v), want a batch of the timeouts of 1 and 3", toClient, err)
	}
	if len(toServer) != 2 || !strings.Contains(string(toServer[0]), `"requestId":1`) || !strings.Contains(string(toServer[1]), `"requestId":3`) {
		t.Errorf("to the server: %q, want one notifications/cancelled for 1 and one for 3", toServer)
	}
	late := g.FromServer("", []byte(`[{"jsonrpc":"2.0","id":1,"result":{"content":[]}},{"jsonrpc":"2.0","id":3,"result":{"content":[]}}]`))
	if late.Forward != nil {
		t.Errorf("the late answers were forwarded: %s", late.Forward)
	}
	if c, s := v.Expire(); c != nil || s != nil {
		t.Errorf("a second expiry answered again: %s %q", c, s)
	}
}
