package replayer

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// causeSession replays testdata/cause.json in one session whose outlet
// hands what it is sent to the returned channel; detach removes it.
func loadCause(t *testing.T) *cassettes.Cassette {
	t.Helper()
	c, err := cassettes.Load("testdata/cause.json")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func causeSession(t *testing.T, opts *Options) (*Engine, *session, <-chan []byte, func()) {
	t.Helper()
	e, err := New(loadCause(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	out := make(chan []byte, 16)
	detach := s.attach(func(b []byte) { out <- append([]byte(nil), b...) })
	t.Cleanup(detach)
	return e, s, out, detach
}

func handleRaw(t *testing.T, s *session, raw string) *answerPlan {
	t.Helper()
	m, err := jsonrpc.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() == jsonrpc.KindResponse {
		if !s.deliver(m) {
			t.Fatalf("no request awaited %s", raw)
		}
		return nil
	}
	return s.plan(m)
}

// next returns the next message the session's outlet was sent, and its
// method ("" for a response).
func next(t *testing.T, out <-chan []byte) (*jsonrpc.Message, string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second) // a bound on failure, not a wait
	defer timeout.Stop()
	select {
	case b := <-out:
		m, err := jsonrpc.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m, m.Method
	case <-timeout.C:
		t.Fatal("nothing sent within 10s")
	}
	return nil, ""
}

const causeInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"c","version":"1"}}}`

// TestEffectsWaitForTheirCause: the answer to initialize is the response
// alone; what the server sent after notifications/initialized goes out
// when the client sends it, and roots/list (under a fresh id) when the
// client's roots change; the log that followed the client's reply waits for
// it, after a reply that differs from the recorded one was reported.
func TestEffectsWaitForTheirCause(t *testing.T) {
	var mu sync.Mutex
	var mismatches []ReplyMismatch
	_, s, out, _ := causeSession(t, &Options{ReplyTimeout: time.Minute, OnReplyMismatch: func(m ReplyMismatch) {
		mu.Lock()
		mismatches = append(mismatches, m)
		mu.Unlock()
	}})
	plan := handleRaw(t, s, causeInitialize)
	if len(plan.Steps) != 1 || !plan.Steps[0].Response {
		var sent []string
		for _, st := range plan.Steps {
			sent = append(sent, string(st.Message))
		}
		t.Fatalf("the answer to initialize sends %d messages, want the response alone:\n%s", len(plan.Steps), strings.Join(sent, "\n"))
	}
	select {
	case b := <-out:
		t.Fatalf("sent before the client's notifications/initialized: %s", b)
	default:
	}
	handleRaw(t, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, want := range []string{"notifications/tools/list_changed", "notifications/message"} {
		if _, got := next(t, out); got != want {
			t.Fatalf("after notifications/initialized: %s, want %s", got, want)
		}
	}
	handleRaw(t, s, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	req, method := next(t, out)
	if method != "roots/list" {
		t.Fatalf("after notifications/roots/list_changed: %q, want roots/list", method)
	}
	handleRaw(t, s, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"roots":[{"uri":"file:///a"}]}}`)
	m, method := next(t, out)
	if method != "notifications/message" || !strings.Contains(string(m.Params), "Roots updated") {
		t.Fatalf("after the reply: %s %s, want the log", method, m.Params)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(mismatches) != 1 || mismatches[0].Method != "roots/list" || mismatches[0].Interaction != 6 {
		t.Fatalf("reply mismatches reported before the log: %+v, want the roots/list of interaction 6", mismatches)
	}
	if !strings.Contains(strings.Join(mismatches[0].Differences, "; "), "roots") {
		t.Errorf("differences %q name no roots", mismatches[0].Differences)
	}
}

// TestEffectsOfACauseThatNeverCame: a session that ends without sending
// notifications/roots/list_changed never gets its effects; the summary
// counts them.
func TestEffectsOfACauseThatNeverCame(t *testing.T) {
	e, s, out, detach := causeSession(t, nil)
	handleRaw(t, s, causeInitialize)
	handleRaw(t, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	next(t, out)
	next(t, out)
	detach()
	st := e.Stats()
	if st.NeverSent != 2 {
		t.Errorf("NeverSent = %d, want 2 (roots/list and its log)", st.NeverSent)
	}
	if want := "2 server messages never sent (their cause never came)"; !strings.Contains(st.String(), want) {
		t.Errorf("summary %q lacks %q", st, want)
	}
}

// TestFollowUpRequestIsAwaited: a server-to-client request recorded after
// a request's response, with no client message between, goes out under a
// fresh id after the response, and the plan awaits the client's reply and
// checks it against the recorded one before what followed it.
func TestFollowUpRequestIsAwaited(t *testing.T) {
	s, plan, mismatches := followUp(t, `{"from": "client", "atMs": 1, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}},
  "response": {"from": "server", "atMs": 2, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}}},
 {"from": "server", "atMs": 3, "request": {"jsonrpc": "2.0", "id": 7, "method": "roots/list"},
  "response": {"from": "client", "atMs": 4, "message": {"jsonrpc": "2.0", "id": 7, "result": {"roots": []}}}},
 {"from": "server", "atMs": 5, "notification": {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "0 roots"}}}`)
	var kinds []string
	for _, st := range plan.Steps {
		switch {
		case st.Kind == stepAwaitReply:
			kinds = append(kinds, "await "+string(st.replyID)+" "+string(st.expect))
		case st.Kind == stepSend && st.Response:
			kinds = append(kinds, "response")
		case st.Kind == stepSend:
			m, _ := jsonrpc.Parse(st.Message)
			kinds = append(kinds, "send "+m.Method+" "+string(m.ID))
		}
	}
	want := []string{"response", "send roots/list 1", `await 1 {"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`, "send notifications/message "}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
	reply := &jsonrpc.Message{ID: "1", Result: json.RawMessage(`{"roots":[{"uri":"file:///x"}]}`)}
	if !s.deliver(reply) {
		t.Fatal("the session awaits no reply to the follow-up's id")
	}
	for _, st := range plan.Steps {
		if st.Kind == stepAwaitReply {
			s.checkReply(plan, st, reply)
		}
	}
	if len(*mismatches) != 1 || (*mismatches)[0].Interaction != 2 {
		t.Errorf("mismatches %+v, want one naming interaction 2 (the roots/list)", *mismatches)
	}
}

// followUp is a session of a cassette of the interactions, sent the call
// of tool "t" (which should cause a follow-up request); mismatches are what
// OnReplyMismatch gets, in this goroutine.
func followUp(t *testing.T, interactions string) (*session, *answerPlan, *[]ReplyMismatch) {
	t.Helper()
	c, err := cassettes.Parse("followup.json", []byte(`{"version": 1, "interactions": [`+interactions+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	var mismatches []ReplyMismatch
	e, err := New(c, &Options{OnReplyMismatch: func(m ReplyMismatch) { mismatches = append(mismatches, m) }})
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	return s, handleRaw(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`), &mismatches
}

// TestReplyMismatchHidesSecrets: what a reply mismatch shows of the two
// replies (both, its differences and its diff) hides what the default
// rules know: a password in a URL, a member under a secret name; the
// differences still name each path that differs.
func TestReplyMismatchHidesSecrets(t *testing.T) {
	s, plan, mismatches := followUp(t, `{"from": "client", "atMs": 1, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}},
  "response": {"from": "server", "atMs": 2, "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}}},
 {"from": "server", "atMs": 3, "request": {"jsonrpc": "2.0", "id": 7, "method": "roots/list"},
  "response": {"from": "client", "atMs": 4, "message": {"jsonrpc": "2.0", "id": 7, "result": {"roots": [{"uri": "https://u:recorded-pw@host/", "name": "a"}]}}}}`)
	reply := &jsonrpc.Message{ID: "1", Result: json.RawMessage(`{"roots":[{"uri":"https://u:live-pw@host/","name":"b","token":"live-token-3"}]}`)}
	if !s.deliver(reply) {
		t.Fatal("the session awaits no reply to the follow-up's id")
	}
	for _, st := range plan.Steps {
		if st.Kind == stepAwaitReply {
			s.checkReply(plan, st, reply)
		}
	}
	if len(*mismatches) != 1 {
		t.Fatalf("mismatches %+v, want 1", *mismatches)
	}
	m := (*mismatches)[0]
	shown, _ := json.Marshal(m)
	for _, secret := range []string{"recorded-pw", "live-pw", "live-token-3"} {
		if strings.Contains(string(shown), secret) || strings.Contains(m.String(), secret) {
			t.Errorf("%q is shown: %s", secret, shown)
		}
	}
	got := strings.Join(m.Differences, "; ")
	for _, want := range []string{`roots.0.name: recorded "a", live "b"`, `roots.0.token: not recorded, live has "[REDACTED]"`, `roots.0.uri: recorded "https://u:[REDACTED]@host/", live "https://u:[REDACTED]@host/"`} {
		if !strings.Contains(got, want) {
			t.Errorf("differences %q, want %q among them", got, want)
		}
	}
}
