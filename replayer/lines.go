package replayer

import (
	"bytes"
	"hash/maphash"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// lineMemos are the memos of the live log's lines of a recorded request
// as recorded and of its response, past their ids (livelog.Memo). They
// lie beside the recorded requests, not in them, which stay in their
// cache line (TestRecordedLayout).
type lineMemos struct{ request, response *livelog.Memo }

// shareLines gives the recorded requests the memos of their live log
// lines: one for the requests recorded alike (the same method and params,
// byte for byte) and one for the responses recorded alike (the same bytes
// but for the id). A cassette holds a call as often as it was made, each
// used once in order, and a replay then makes the line of each call and
// answer once, not at every call. Only when the log makes lines from
// memos: else nothing is hashed for nothing (--quiet).
func (e *Engine) shareLines() {
	if !livelog.Memoizes(e.opts.Logger) {
		return
	}
	seed := maphash.MakeSeed()
	requests, responses := newAlike(seed, len(e.requests)), newAlike(seed, len(e.requests))
	e.lines = make([]lineMemos, len(e.requests))
	for i := range e.requests {
		r, l := &e.requests[i], &e.lines[i]
		l.request = requests.memo(r.req.Method, view(r.req.Params))
		if r.lone && r.idAt >= 0 {
			l.response = responses.memo(view(r.response[:r.idAt]), view(r.response[r.idEnd:]))
		}
	}
}

// alike hands out one memo to the lines of the messages made of the same
// two parts.
type alike struct {
	seed  maphash.Seed
	seen  map[uint64]parts
	memos []livelog.Memo // never grows past its capacity: the memos stay where they are
}

type parts struct {
	a, b string
	memo *livelog.Memo
}

func newAlike(seed maphash.Seed, n int) *alike {
	return &alike{seed: seed, seen: map[uint64]parts{}, memos: make([]livelog.Memo, 0, n)}
}

// memo returns the memo of the messages made of a and b, a new one for
// the first (at most the capacity of x.memos in all).
func (x *alike) memo(a, b string) *livelog.Memo {
	var h maphash.Hash
	h.SetSeed(x.seed)
	h.WriteString(a)
	h.WriteByte(0)
	h.WriteString(b)
	k := h.Sum64()
	p, ok := x.seen[k]
	if ok && p.a == a && p.b == b {
		return p.memo
	}
	x.memos = x.memos[:len(x.memos)+1]
	m := &x.memos[len(x.memos)-1]
	if !ok {
		x.seen[k] = parts{a, b, m}
	}
	return m
}

// view is b as a string, not copied: for b that does not change.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// requestLineOf returns the memo of the line of msg, a live request that
// r answers, nil when msg is not r's request as recorded (but for its id)
// or r has none.
func (e *Engine) requestLineOf(r *recorded, msg *jsonrpc.Message) *livelog.Memo {
	if r == nil || e.lines == nil || msg.Method != r.req.Method || !bytes.Equal(msg.Params, r.req.Params) {
		return nil
	}
	return e.lines[r.pos].request
}

// responseLineOf returns the memo of the line of out, a message that a
// plan of r sends, and out's id, when out is r's response as recorded but
// for its id; nil otherwise (a scripted fault or a page changed it).
func (e *Engine) responseLineOf(r *recorded, out []byte) (*livelog.Memo, jsonrpc.ID) {
	if r == nil || e.lines == nil || e.lines[r.pos].response == nil {
		return nil, ""
	}
	before, after := r.response[:r.idAt], r.response[r.idEnd:]
	if len(out) <= len(before)+len(after) || !bytes.HasPrefix(out, before) || !bytes.HasSuffix(out, after) {
		return nil, ""
	}
	id := out[len(before) : len(out)-len(after)]
	return e.lines[r.pos].response, jsonrpc.ID(unsafe.String(&id[0], len(id)))
}
