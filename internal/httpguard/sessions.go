package httpguard

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// DefaultSessionIdle is how long a session may go without a request before
// the listener ends it (Options.SessionIdle left zero).
const DefaultSessionIdle = 30 * time.Minute

// sessionTable counts the sessions of a listener against --max-sessions and
// ends those idle for longer than --session-idle. A request that would open
// a session (an initialize without Mcp-Session-Id, an HTTP+SSE stream)
// reserves a slot before it is handled; the slot becomes the session when
// the answer gives an Mcp-Session-Id, and is freed otherwise, so that the
// count never passes the bound however many such requests run at once.
type sessionTable struct {
	max  int           // < 0: no bound
	idle time.Duration // < 0: sessions never expire
	now  func() time.Time
	end  func(id string) // nil: nothing to end behind the guard

	mu        sync.Mutex // guards the fields below
	open      map[string]*sessionState
	reserved  int                 // slots of requests being answered, HTTP+SSE streams included
	gone      map[string]struct{} // sessions ended by expiry, answered 404
	lastSweep time.Time
}

// sessionState is one open session.
type sessionState struct {
	active int       // its requests in flight (an open GET stream is one)
	last   time.Time // when the last of them began or ended
}

// maxGone bounds the expired session ids remembered for their 404.
const maxGone = 4096

func newSessionTable(max int, idle time.Duration, now func() time.Time, end func(string)) *sessionTable {
	return &sessionTable{max: max, idle: idle, now: now, end: end, open: map[string]*sessionState{}, gone: map[string]struct{}{}, lastSweep: now()}
}

// sessionEntry is what enter found for a request's session id.
type sessionEntry int

const (
	sessionUnknown sessionEntry = iota // not one the guard saw open: the handler decides
	sessionOpen                        // open: counted in flight until leave
	sessionExpired                     // ended by expiry: answer 404
)

// enter notes a request of session id; a session idle past its time is
// ended here.
func (t *sessionTable) enter(id string) sessionEntry {
	now := t.now()
	t.mu.Lock()
	if _, ok := t.gone[id]; ok {
		t.mu.Unlock()
		return sessionExpired
	}
	s := t.open[id]
	if s == nil {
		t.mu.Unlock()
		return sessionUnknown
	}
	if t.expired(s, now) {
		t.expire(id)
		t.mu.Unlock()
		t.ended([]string{id})
		return sessionExpired
	}
	s.active++
	s.last = now
	t.mu.Unlock()
	return sessionOpen
}

// leave notes the end of a request that enter found open.
func (t *sessionTable) leave(id string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.open[id]; s != nil {
		s.active--
		s.last = now
	}
}

// reserve takes a slot for a session about to open and reports whether
// there was one. When the table is full, or an idle period has passed since
// the last sweep, idle sessions are ended first.
func (t *sessionTable) reserve() bool {
	now := t.now()
	t.mu.Lock()
	var ended []string
	full := t.max >= 0 && len(t.open)+t.reserved >= t.max
	if t.idle > 0 && (full || now.Sub(t.lastSweep) >= t.idle) {
		ended = t.sweep(now)
	}
	ok := t.max < 0 || len(t.open)+t.reserved < t.max
	if ok {
		t.reserved++
	}
	t.mu.Unlock()
	t.ended(ended)
	return ok
}

// unreserve frees a slot that reserve took and no session used.
func (t *sessionTable) unreserve() {
	t.mu.Lock()
	t.reserved--
	t.mu.Unlock()
}

// opened turns a reserved slot (reserved true) into the session id, or
// counts a session that the handler opened unasked while there is room.
func (t *sessionTable) opened(id string, reserved bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if reserved {
		t.reserved--
	} else if t.max >= 0 && len(t.open)+t.reserved >= t.max {
		return
	}
	if t.open[id] == nil {
		t.open[id] = &sessionState{last: now}
	}
}

// closed forgets a session that the handler ended (DELETE, 404).
func (t *sessionTable) closed(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.open, id)
}

func (t *sessionTable) expired(s *sessionState, now time.Time) bool {
	return t.idle > 0 && s.active == 0 && now.Sub(s.last) >= t.idle
}

// expire moves id from open to gone. t.mu is held.
func (t *sessionTable) expire(id string) {
	delete(t.open, id)
	if len(t.gone) >= maxGone {
		for old := range t.gone {
			delete(t.gone, old)
			break
		}
	}
	t.gone[id] = struct{}{}
}

// sweep expires every idle session and returns their ids. t.mu is held.
func (t *sessionTable) sweep(now time.Time) []string {
	t.lastSweep = now
	var ids []string
	for id, s := range t.open {
		if t.expired(s, now) {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		t.expire(id)
	}
	return ids
}

// ended tells the handler behind the guard that the sessions ids ended.
// t.mu is not held.
func (t *sessionTable) ended(ids []string) {
	if t.end == nil {
		return
	}
	for _, id := range ids {
		t.end(id)
	}
}

// EndByDelete returns an Options.EndSession that ends a session of h as
// its client would: a DELETE of path with the session's Mcp-Session-Id,
// whose answer is dropped.
func EndByDelete(h http.Handler, path string) func(id string) {
	return func(id string) {
		r, err := http.NewRequest(http.MethodDelete, path, http.NoBody)
		if err != nil {
			return
		}
		r.Host = "127.0.0.1"
		r.Header.Set(mcp.HeaderSessionID, id)
		h.ServeHTTP(discard{}, r)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// errFound stops opensSession's walk over a batch.
var errFound = errors.New("found")

// opensSession reports whether body holds an initialize, alone or in a
// batch: the request that opens a Streamable HTTP session. The method is
// read as the JSON-RPC parser reads it, escapes and all.
func opensSession(body []byte) bool {
	data := bytes.TrimSpace(body)
	// Without a backslash no string holds an escape, and a body that
	// opens a session holds the word itself: every other request (each of
	// a 2026-07-28 client's) is turned away by two scans, unparsed.
	if bytes.IndexByte(data, '\\') < 0 && !bytes.Contains(data, []byte("initialize")) {
		return false
	}
	if !jsonrpc.Valid(data) {
		return false
	}
	if len(data) == 0 || data[0] != '[' {
		return methodOf(data) == "initialize"
	}
	return jsonrpc.EachElement(data, func(el []byte) error {
		if methodOf(el) == "initialize" {
			return errFound
		}
		return nil
	}) == errFound
}

// methodOf is the method of the valid JSON message data, "" for none.
func methodOf(data []byte) string {
	var m jsonrpc.Message
	jsonrpc.ParseValidInto(&m, data) // an invalid message still has the method it names
	return m.Method
}
