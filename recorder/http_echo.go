package recorder

import (
	"hash/maphash"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// eventLog remembers the SSE event ids that the HTTP tap has recorded, so
// that an event a server sends again on a resumed stream (an echo: its id
// and data were already recorded) is forwarded but not recorded twice.
// Event ids are unique in a session (Mcp-Session-Id), or, without sessions,
// in a stream: a stream resumed without a session (GET with Last-Event-ID)
// belongs to the stream of the event it names. An id that comes again with
// other data is recorded: a server that numbers each stream's events anew
// loses nothing.
type eventLog struct {
	seed maphash.Seed

	mu sync.Mutex // guards seen and streamOf
	// seen maps a session ("s" and its id) or a stream without a session
	// ("x" and the exchange) to its recorded event ids and a hash of their
	// data.
	seen map[string]map[string]uint64
	// streamOf maps an event id recorded without a session to its stream.
	streamOf map[string]string
}

func newEventLog() *eventLog {
	return &eventLog{seed: maphash.MakeSeed(), seen: map[string]map[string]uint64{}, streamOf: map[string]string{}}
}

// scope names where the events of exchange ex are unique: its session, from
// the request's or else the response's Mcp-Session-Id, or its stream.
func (l *eventLog) scope(r *http.Request, resp *http.Response, ex uint64) string {
	if s := r.Header.Get(mcp.HeaderSessionID); s != "" {
		return "s" + s
	}
	if s := resp.Header.Get(mcp.HeaderSessionID); s != "" {
		return "s" + s
	}
	if last := r.Header.Get(mcp.HeaderLastEventID); last != "" {
		l.mu.Lock()
		scope, ok := l.streamOf[last]
		l.mu.Unlock()
		if ok {
			return scope
		}
	}
	return "x" + strconv.FormatUint(ex, 10)
}

// first notes event id with data in scope, and reports whether it is new:
// false for an echo of an event already recorded.
func (l *eventLog) first(scope, id string, data []byte) bool {
	h := maphash.Bytes(l.seed, data)
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.seen[scope]
	if ids == nil {
		ids = map[string]uint64{}
		l.seen[scope] = ids
	}
	if old, ok := ids[id]; ok && old == h {
		return false
	}
	ids[id] = h
	if scope[0] == 'x' {
		l.streamOf[id] = scope
	}
	return true
}

// end forgets a session that the client ended (DELETE): its ids will not
// come again.
func (l *eventLog) end(r *http.Request) {
	if s := r.Header.Get(mcp.HeaderSessionID); s != "" {
		l.mu.Lock()
		delete(l.seen, "s"+s)
		l.mu.Unlock()
	}
}
