package replayer

import (
	"hash/maphash"
	"strings"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// lineMemos are the memos of the live log's lines of a recorded request
// as recorded (requestLine) and of its response (responseLine), past their
// ids (livelog.Memo). They lie beside the recorded requests, not in them,
// which stay in their cache line (TestRecordedLayout).
type lineMemos [2]*livelog.Memo

const (
	requestLine = iota
	responseLine
)

// lineParts are the two parts that make the messages whose lines share a
// memo alike: a request's method and params; a response's bytes before
// and after its id. ok is false for a message with no memo.
type lineParts func(r *recorded) (a, b string, ok bool)

// lineParts of the requests and of the responses.
var (
	requestParts lineParts = func(r *recorded) (string, string, bool) {
		return r.req.Method, view(r.req.Params), true
	}
	responseParts lineParts = func(r *recorded) (string, string, bool) {
		if !r.lone || r.idAt < 0 {
			return "", "", false
		}
		return view(r.response[:r.idAt]), view(r.response[r.idEnd:]), true
	}
)

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
	e.lines = make([]lineMemos, len(e.requests))
	// At most two memos a request, in one allocation: the slice never
	// grows past its capacity, so that a pointer into it stays valid.
	memos := make([]livelog.Memo, 0, 2*len(e.requests))
	seed := maphash.MakeSeed()
	for which, parts := range [...]lineParts{requestLine: requestParts, responseLine: responseParts} {
		// The first request with each hash of its parts; the parts are
		// read again from it, so that the map holds no copy of them.
		first := map[uint64]int32{}
		for i := range e.requests {
			a, b, ok := parts(&e.requests[i])
			if !ok {
				continue
			}
			var h maphash.Hash
			h.SetSeed(seed)
			h.WriteString(a)
			h.WriteByte(0)
			h.WriteString(b)
			k := h.Sum64()
			if p, seen := first[k]; seen {
				if pa, pb, _ := parts(&e.requests[p]); pa == a && pb == b {
					e.lines[i][which] = e.lines[p][which]
					continue
				}
			} else {
				first[k] = int32(i) // the index holds positions in 32 bits (New)
			}
			memos = memos[:len(memos)+1]
			e.lines[i][which] = &memos[len(memos)-1]
		}
	}
}

// view is b as a string, not copied: for b that does not change.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// requestLineOf returns the memo of the line of msg, a live request that
// r answers, nil when msg is not r's request as recorded (but for its id)
// or r has none.
func (e *Engine) requestLineOf(r *recorded, msg *jsonrpc.Message) *livelog.Memo {
	if r == nil || e.lines == nil {
		return nil
	}
	if method, params, _ := requestParts(r); msg.Method != method || view(msg.Params) != params {
		return nil
	}
	return e.lines[r.pos][requestLine]
}

// responseLineOf returns the memo of the line of out, a message that a
// plan of r sends, and out's id, when out is r's response as recorded but
// for its id; nil otherwise (a scripted fault or a page changed it).
func (e *Engine) responseLineOf(r *recorded, out []byte) (*livelog.Memo, jsonrpc.ID) {
	if r == nil || e.lines == nil || e.lines[r.pos][responseLine] == nil {
		return nil, ""
	}
	before, after, _ := responseParts(r)
	s := view(out)
	if len(s) <= len(before)+len(after) || !strings.HasPrefix(s, before) || !strings.HasSuffix(s, after) {
		return nil, ""
	}
	return e.lines[r.pos][responseLine], jsonrpc.ID(s[len(before) : len(s)-len(after)])
}
