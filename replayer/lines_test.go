package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// TestLinesOfCallsRecordedAlike: the live log's lines of replayed calls
// and answers, which the requests recorded alike make once (shareLines),
// show each call's own id and params, and each answer's own id: a call
// whose params differ from those its match recorded (the match ignores
// the text) shows its own, though a call recorded alike was logged with
// the recorded params before.
func TestLinesOfCallsRecordedAlike(t *testing.T) {
	c := scatteredCassette(0)
	add := func(id int, text, answer string) {
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient,
			Request:  fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text),
			Response: &cassettes.Message{From: cassettes.FromServer, Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, answer)}})
	}
	add(1, "a", "A") // #2
	add(2, "a", "A") // #3, as #2 but for the id
	add(3, "b", "B") // #4
	c.Match = json.RawMessage(`{"ignore":["arguments.text"]}`)
	var log bytes.Buffer
	e, err := New(c, &Options{Logger: slog.New(livelog.NewTextHandler(&log))})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := e.lines[1], e.lines[2]; a[requestLine] == nil || a[requestLine] != b[requestLine] || a[responseLine] != b[responseLine] {
		t.Fatalf("the calls recorded alike share no memo: %+v %+v", a, b)
	}
	if a, b := e.lines[2], e.lines[3]; a[requestLine] == b[requestLine] || a[responseLine] == b[responseLine] {
		t.Fatalf("calls recorded otherwise share a memo: %+v %+v", a, b)
	}
	out := &discardTry{}
	conn := newConn(e, e.newSession(), out)
	ctx := context.Background()
	for _, l := range []string{scatteredInitialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		conn.receive(ctx, []byte(l))
	}
	log.Reset()
	for _, call := range []struct{ id, text string }{{"7", "a"}, {`"s-8"`, "zzz"}, {"9", "b"}} {
		conn.receive(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, call.id, call.text))
	}
	want := strings.Join([]string{
		`mcpmock: → 7 tools/call echo {"text":"a"} [replayed #2]`,
		`mcpmock: ← 7 result "A" (L)`,
		`mcpmock: → "s-8" tools/call echo {"text":"zzz"} [replayed #3]`,
		`mcpmock: ← "s-8" result "A" (L)`,
		`mcpmock: → 9 tools/call echo {"text":"b"} [replayed #4]`,
		`mcpmock: ← 9 result "B" (L)`,
	}, "\n") + "\n"
	if got := regexp.MustCompile(`\([0-9.]+[µm]?s\)`).ReplaceAllString(log.String(), "(L)"); got != want {
		t.Errorf("the log is\n%s\nwant\n%s", got, want)
	}
}

// TestResponseLineOf: the memo of a response's line is given for the
// recorded response under any id, and for nothing else: not for a
// response that a fault cut, or whose result differs.
func TestResponseLineOf(t *testing.T) {
	rec := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"A"}]}}`)
	start, end, ok := jsonrpc.IDSpan(rec)
	if !ok {
		t.Fatal("no id")
	}
	r := &recorded{lone: true, response: rec, idAt: int32(start), idEnd: int32(end)}
	e := &Engine{lines: []lineMemos{{responseLine: new(livelog.Memo)}}}
	for _, c := range []struct {
		out  string
		want jsonrpc.ID // "" for no memo
	}{
		{`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"A"}]}}`, "12"},
		{`{"jsonrpc":"2.0","id":"x y","result":{"content":[{"type":"text","text":"A"}]}}`, `"x y"`},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"A"}]}}`, "3"},
		{`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"B"}]}}`, ""},
		{`{"jsonrpc":"2.0","id":12,"result":{"content":[{"ty`, ""},
		{`{"jsonrpc":"2.0","id":,"result":{"content":[{"type":"text","text":"A"}]}}`, ""},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"A"}]}} `, ""},
	} {
		memo, id := e.responseLineOf(r, []byte(c.out))
		if (memo != nil) != (c.want != "") || id != c.want {
			t.Errorf("%s: memo %v, id %q; want a memo %v, id %q", c.out, memo != nil, id, c.want != "", c.want)
		}
	}
	if memo, _ := (&Engine{lines: []lineMemos{{}}}).responseLineOf(r, rec); memo != nil {
		t.Errorf("a request without a memo gave one")
	}
	if memo, _ := (&Engine{}).responseLineOf(r, rec); memo != nil {
		t.Errorf("an engine without memos gave one")
	}
}
