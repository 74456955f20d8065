package livelog

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// A Memo keeps what the line of a message shows past its id, for messages
// that differ from each other only by their id (MessageLike). A replay
// sends each recorded response again and again under a new id, and most
// requests it matches are as they were recorded: their lines are then made
// once, not at every call, which was a third of what the log cost a
// replayed call. Its zero value is empty; it is safe for concurrent use.
type Memo struct{ p atomic.Pointer[memoLine] }

// maxMemo is the longest body a Memo keeps; a line shows a few short
// parts of a message, so that only an error's long message passes it.
const maxMemo = 1 << 10

type memoLine struct {
	rd    *cassettes.Redactor // the rules body was redacted by
	body  []byte
	level slog.Level
}

// line returns what m keeps for a line redacted by rd, nil for none.
func (m *Memo) line(rd *cassettes.Redactor) *memoLine {
	if m == nil {
		return nil
	}
	if l := m.p.Load(); l != nil && l.rd == rd {
		return l
	}
	return nil
}

// keep keeps body, redacted by rd, at level in m (a copy), unless m is nil.
func (m *Memo) keep(rd *cassettes.Redactor, body []byte, level slog.Level) {
	if m == nil || len(body) > maxMemo {
		return
	}
	m.p.Store(&memoLine{rd: rd, body: bytes.Clone(body), level: level})
}

// memoizes says whether lines made by rules can come from a Memo: the
// parts of a message are redacted apart (local), so that the id is, and
// the handler in front redacts no line again as a whole.
func (rules lineRules) memoizes() bool { return rules.local && !rules.again }

// Like writes the line of a message with the id id that differs only by
// its id from those logged with memo by MessageLike, from memo, and
// reports whether it did: not when memo holds nothing yet, or when l makes
// its lines another way (another handler, or rules that redact a message
// whole), and the caller then logs the message with MessageLike. It
// reports true when l logs nothing.
func Like(l *slog.Logger, dir string, id jsonrpc.ID, latency time.Duration, note string, memo *Memo) bool {
	if l == nil || !l.Enabled(context.Background(), slog.LevelInfo) {
		return true
	}
	h, rules := memoizing(l)
	if h == nil {
		return false
	}
	m := memo.line(rules.rd)
	if m == nil {
		return false
	}
	h.like(rules, dir, id, m, latency, note)
	return true
}

// Memoizes reports whether l makes lines from memos (MessageLike, Like):
// a text log whose rules redact the parts of a message apart; a caller
// prepares no Memo for any other.
func Memoizes(l *slog.Logger) bool {
	if Off(l) {
		return false
	}
	h, _ := memoizing(l)
	return h != nil
}

// memoizing returns the text handler that l writes to and the rules of
// its lines when they can come from a Memo; nil otherwise.
func memoizing(l *slog.Logger) (*TextHandler, lineRules) {
	if h, rules := textHandlerOf(l); h != nil && rules.memoizes() {
		return h, rules
	}
	return nil, lineRules{}
}
