package livelog

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestMemoLines: a line written from a Memo (MessageLike, Like) is the
// line that Message writes of the same message, whatever its id (a number,
// a string, a string that holds a secret), for every shape of message of
// lineCases, with and without colour.
func TestMemoLines(t *testing.T) {
	ids := []jsonrpc.ID{"12345", `"s-8"`, `"sk-abcdefghijklmnopqrstuvwxyz0123"`}
	for i, c := range lineCases {
		first, err := jsonrpc.Parse([]byte(c.raw))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for _, colored := range []bool{false, true} {
			h := struct {
				name string
				l    func(w io.Writer) *slog.Logger
			}{"text", func(w io.Writer) *slog.Logger { return slog.New(NewTextHandler(w)) }}
			if colored {
				h.name, h.l = "colored", func(w io.Writer) *slog.Logger { return slog.New(NewTextHandler(w).Colored()) }
			}
			var memo Memo
			var out bytes.Buffer
			l := h.l(&out)
			if !Memoizes(l) {
				t.Fatalf("%s: Memoizes is false", h.name)
			}
			if Like(l, ToClient, first.ID, c.latency, c.note, &memo) {
				t.Fatalf("case %d %s: Like wrote a line from an empty memo: %q", i, h.name, out.String())
			}
			MessageLike(l, ToClient, first, c.latency, c.note, &memo)
			if want := line(h.l, first, c.latency, c.note); out.String() != want {
				t.Errorf("case %d %s: the first line\n got %q\nwant %q", i, h.name, out.String(), want)
			}
			if first.ID.IsZero() {
				continue // a notification: no other id to give it
			}
			for _, id := range ids {
				raw, err := jsonrpc.WithID([]byte(c.raw), id)
				if err != nil {
					t.Fatal(err)
				}
				msg, err := jsonrpc.Parse(raw)
				if err != nil {
					t.Fatal(err)
				}
				want := line(h.l, msg, c.latency, c.note)
				out.Reset()
				if !Like(l, ToClient, id, c.latency, c.note, &memo) {
					t.Errorf("case %d %s id %s: Like wrote nothing from a memo filled", i, h.name, id)
				} else if out.String() != want {
					t.Errorf("case %d %s id %s: Like's line\n got %q\nwant %q", i, h.name, id, out.String(), want)
				}
				out.Reset()
				MessageLike(l, ToClient, msg, c.latency, c.note, &memo)
				if out.String() != want {
					t.Errorf("case %d %s id %s: MessageLike's line\n got %q\nwant %q", i, h.name, id, out.String(), want)
				}
			}
		}
	}
}

// line is the line that Message writes of msg to a logger made by l.
func line(l func(io.Writer) *slog.Logger, msg *jsonrpc.Message, latency time.Duration, note string) string {
	var out bytes.Buffer
	Message(l(&out), ToClient, msg, latency, note)
	return out.String()
}

// TestMemoOnlyWhereLinesAreAlike: a log that makes its lines another way
// neither fills a Memo nor writes from one: one that redacts each line
// again as a whole (Redacting, the tap's), a structured one; and a memo
// filled by one log is not used by such another.
func TestMemoOnlyWhereLinesAreAlike(t *testing.T) {
	rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(&cassettes.RedactRules{Values: []string{"bob"}}))
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int, user string) *jsonrpc.Message {
		m, err := jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"login","arguments":{"user":%q}}}`, id, user))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var out bytes.Buffer
	for _, l := range []*slog.Logger{
		Redacting(slog.New(NewTextHandler(&out)), rd),
		Redacting(slog.New(slog.NewJSONHandler(&out, nil)), rd),
		Discard,
	} {
		if Memoizes(l) {
			t.Errorf("%T: Memoizes is true", l.Handler())
		}
		var memo Memo
		out.Reset()
		MessageLike(l, ToServer, call(1, "bob"), 0, "", &memo)
		if memo.p.Load() != nil {
			t.Errorf("%T: MessageLike filled the memo", l.Handler())
		}
		if l == Discard {
			continue
		}
		if bytes.Contains(out.Bytes(), []byte("bob")) {
			t.Errorf("%T: the line shows what its rules hide: %s", l.Handler(), out.Bytes())
		}
		// A memo filled by the plain text log, which shows "bob": the
		// redacting log must not write its line from it.
		MessageLike(slog.New(NewTextHandler(io.Discard)), ToServer, call(1, "bob"), 0, "", &memo)
		out.Reset()
		if Like(l, ToServer, "2", 0, "", &memo) {
			t.Errorf("%T: Like wrote from another log's memo: %s", l.Handler(), out.Bytes())
		}
		MessageLike(l, ToServer, call(2, "bob"), 0, "", &memo)
		if bytes.Contains(out.Bytes(), []byte("bob")) {
			t.Errorf("%T: the line shows what its rules hide: %s", l.Handler(), out.Bytes())
		}
	}
}

// TestMemoizesNoLogger: a nil logger makes no lines, from memos or not.
func TestMemoizesNoLogger(t *testing.T) {
	if Memoizes(nil) {
		t.Error("Memoizes(nil) is true")
	}
}
