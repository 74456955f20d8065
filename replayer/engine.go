// Package replayer plays a cassette back as an MCP server.
//
// The Engine knows no transport: a Session takes one incoming client message
// and returns a Plan, the steps a real server would take in answer (send this
// message, wait for the client's reply to that request, ...). Front ends
// carry plans out: Serve speaks newline-delimited JSON-RPC on any reader and
// writer (stdio, a pipe, an in-memory connection).
//
//	c, _ := cassettes.Load("weather.json")
//	e, _ := replayer.New(c, nil)
//	err := e.Serve(ctx, os.Stdin, os.Stdout)
package replayer

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// CodeNoMatch is the JSON-RPC error code of a request whose method occurs in
// the cassette but that no recorded request matches. (A method that never
// occurs gets jsonrpc.CodeMethodNotFound, -32601.) It lies in the range that
// MCP leaves to implementations.
const CodeNoMatch = -32010

// ErrNoMatch is the error a Miss wraps.
var ErrNoMatch = errors.New("no recorded interaction matches")

// Options configure an Engine. The zero value (or nil) is the default.
type Options struct {
	// Matcher decides which recorded requests match a live one; nil means
	// matcher.Default(). The cassette's "match" configuration, and an
	// interaction's own, are layered over it with matcher.WithConfig (so
	// placeholders such as "{{any number}}" in recorded values work too).
	// The engine only tries recorded requests of the live request's method
	// and, for tools/call, tool name; when the effective matcher is a
	// matcher.Keyer or matcher.Indexer it finds them through a map, so a
	// call costs the same whatever the size of the cassette.
	Matcher matcher.Matcher
	// Strict makes every recorded interaction answer at most once (or its
	// "times"), so a repeated request is a miss instead of answering the
	// last match again.
	Strict bool
	// ReplyTimeout bounds the wait for the client's reply to a replayed
	// server-to-client request; 0 means 30 seconds.
	ReplyTimeout time.Duration
	// Logger receives the live log; nil means silent.
	Logger *slog.Logger
	// OnMiss, if set, is called for every request that matched nothing.
	OnMiss func(Miss)
	// Waiting, if set, is told of each client request whose answer waits
	// (a scripted delay, a reply of the client's, a slow answer), with +1
	// when it starts to wait and -1 once it is answered or dropped: each
	// holds memory until then (`mcpmock replay` grows its soft memory
	// limit by it). It must not block.
	Waiting func(delta int)
	// Upstream, if set, is the live server of the new-episodes mode: a
	// request that nothing recorded answers is forwarded to it, and what it
	// answered is kept (Engine.NewEpisodes) and answers repeats.
	Upstream *Upstream
	// Overlays are cassettes of scripted behaviour laid over the recording:
	// their interactions are tried first, in order (see cassettes.When and
	// cassettes.Fault). A plain interaction of an overlay (no "when") applies
	// to every call it matches.
	Overlays []*cassettes.Cassette
	// Seed seeds the random source of probabilities and random delays; the
	// same seed gives the same sequence (per session, in session order).
	Seed uint64
	// Latency delays every answer (recorded pacing, a multiple of it, or a
	// fixed delay); zero answers at once.
	Latency Latency
	// Now is the clock, for rate limits; nil means time.Now.
	Now func() time.Time
	// OnRequest, if set, is called for every client request with what
	// answered it, before the answer is sent. It must not block.
	OnRequest func(Event)
	// NoSchemaValidation turns off the check of tools/call arguments
	// against the tool's recorded inputSchema (schema.go). False validates:
	// a call with invalid arguments that no recorded call matches is
	// answered as a real server of the session's protocol version would.
	NoSchemaValidation bool
	// PageSize, when positive, re-pages the recorded lists (tools/list,
	// resources/list, resources/templates/list, prompts/list) into pages
	// of this many items with opaque cursors (pages.go); 0 uses the
	// cassette's "replay": {"pageSize": N}, or else serves the recorded
	// pages as recorded.
	PageSize int
	// OnReplyMismatch, if set, is called when a client's reply to a
	// replayed server-to-client request differs from the recorded reply
	// (or never comes). With Strict, the request that caused it is then
	// answered with an error (CodeReplyMismatch). It must not block.
	OnReplyMismatch func(ReplyMismatch)
}

// Event describes one client request handled by a session.
type Event struct {
	Method string
	// Tool and Arguments are set for tools/call.
	Tool      string
	Arguments []byte
	// Params are the request's raw params.
	Params []byte
	// Interaction is the 1-based cassette position of the recorded
	// interaction that answered, 0 when none did.
	Interaction int
	// Miss is set when nothing matched.
	Miss *Miss
}

// Engine holds a cassette prepared for replay. It is safe for concurrent use
// by any number of sessions.
type Engine struct {
	opts     Options
	cassette *cassettes.Cassette
	index    *index // match.go: the recorded requests by method, tool and key

	requests  []recorded          // client requests, in recorded order
	byMethod  map[string][]int    // method → indexes into requests
	followers map[int][]*followup // server-initiated items after request i (-1: before any)
	causes    []*cause            // client notifications outside requests, with their effects
	byCause   map[string][]int    // method → indexes into causes
	discover  *recorded           // a recorded successful server/discover, for a synthesized initialize

	silent map[*cassettes.Interaction]bool // echo.go: exchanges with lines that are no message, not sent
	lines  []lineMemos                     // lines.go: the memos of the live log's lines, by position in requests

	stats struct {
		messages, matched, unmatched atomic.Int64
		scripted                     atomic.Int64 // answered by a scripted interaction (faults.go)
		neverSent                    atomic.Int64 // effects whose cause never came (cause.go)
	}
	usedMu sync.Mutex // guards used and usedCount
	// used marks, by cassette position, the requests answered at least
	// once by any session; usedCount counts them.
	used      []bool
	usedCount int

	scripted []*scripted  // overlays' and scripted interactions, tried first
	episodes episodes     // what the live server taught, in the new-episodes mode (episodes.go)
	sessions atomic.Int64 // sessions started, for seeding

	caps         serverCaps            // protocol.go
	gen          map[int]int           // list request position → list generation
	listings     map[string][]*listing // pages.go: recorded listings by method
	listingOf    map[int]*listing      // request position → its listing
	replyMatcher matcher.Matcher       // compares clients' replies (replies.go)
	liveMu       sync.Mutex            // guards live
	live         map[*session]int      // sessions with outlets (notify.go)

	toolSchemas toolSchemas // schema.go: the recorded tools' schemas, compiled on first use

	tasksOnce sync.Once       // tasks.go: taskIDs, on first use
	taskIDs   map[string]bool // task ids the recording's CreateTaskResults made
}

func (e *Engine) now() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now()
	}
	return time.Now()
}

// recorded is one recorded client request, ready to match and answer. It
// is laid out small, in 128 bytes: a cassette of 100,000 requests holds
// 100,000 of them, in one array that starts on a page. What a replayed
// call reads of it is its first 64 bytes, one cache line: on a large
// cassette each call reads a request far from the last one's, and each
// line fetched is most of what such a call costs more than a call on a
// small cassette (BenchmarkReplayScattered, TestRecordedLayout).
type recorded struct {
	// response and responseBatch are the interaction's response and its
	// Batch when it has no exchange (lone), and times is
	// interaction.Times: a replayed call then reads what it needs from
	// here and not from the cassette's structures, which on a large
	// cassette lie far apart.
	response json.RawMessage
	// idAt and idEnd are the span of the response's id (idAt -1: none
	// found, or past what an int32 holds), found once and not at every
	// answer.
	idAt, idEnd   int32
	times         int
	index         int // position in cassette.Interactions
	pos           int // position in Engine.requests
	responseBatch int32
	lone          bool
	// mrtrRetry says whether the request is the retry of a multi-round-trip
	// request (protocol.go), worked out once; its requestState is read
	// again where it is needed, which is seldom.
	mrtrRetry bool
	// decides says that an equal index key alone makes this request match
	// a live one (matcher.Keyer, matcher.KeyDecider); hasExact, that a
	// rule loosens it, so that whether a match is exact is told by the
	// hash of its exact key (index.exact).
	decides  bool
	hasExact bool

	req         matcher.Request
	interaction *cassettes.Interaction
	m           matcher.Matcher // the effective matcher (match.go)
}

// respondedAt is the recorded offset of r's response (0 for none), which
// orders the server messages that belong to no request around it.
func (r *recorded) respondedAt() cassettes.Millis {
	if r.interaction.Response == nil {
		return 0
	}
	return r.interaction.Response.AtMs
}

// followup is a server message that belongs to no request: a notification,
// a server-to-client request, or a raw line.
type followup struct {
	raw     []byte
	request bool             // a server-to-client request: gets a fresh id
	batch   int              // the recorded server batch it came in (Step.Batch)
	at      cassettes.Millis // its recorded offset
	// before says it came before the response of the request it follows
	// (Interaction.BeforeResponse); get, that it came on the GET stream
	// (or a listen stream) of Streamable HTTP.
	before, get   bool
	afterExchange int
	// For a request: its method, the client's recorded reply (nil when
	// none was recorded) and its cassette position.
	method string
	expect json.RawMessage
	index  int
}

// New prepares a cassette for replay.
func New(c *cassettes.Cassette, opts *Options) (*Engine, error) {
	e := &Engine{cassette: c, byMethod: map[string][]int{}, followers: map[int][]*followup{}, used: make([]bool, len(c.Interactions))}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.ReplyTimeout == 0 {
		e.opts.ReplyTimeout = 30 * time.Second
	}
	if e.opts.Logger == nil {
		e.opts.Logger = livelog.Discard
	}
	idx, err := newIndex(e.opts.Matcher, c.Match)
	if err != nil {
		return nil, err
	}
	e.index = idx
	for i, o := range e.opts.Overlays {
		if err := e.addScripted(o, fmt.Sprintf("overlay %d", i+1), i+1, false); err != nil {
			return nil, err
		}
	}
	// The recorded requests are allocated together: one object for the GC
	// instead of one per request, and no pointer each. The slice never
	// grows past nreq, so a *recorded taken while it fills stays valid.
	nreq := 0
	for i := range c.Interactions {
		if in := &c.Interactions[i]; !in.Scripted() && in.From == cassettes.FromClient && in.Request != nil {
			nreq++
		}
	}
	if nreq > math.MaxInt32 { // the index numbers them in 32 bits (keyList)
		return nil, fmt.Errorf("replayer: the cassette holds %d client requests, more than %d", nreq, math.MaxInt32)
	}
	e.requests = make([]recorded, 0, nreq)
	// A server message belongs to the last client message recorded before
	// it: a request (followers) or a notification (causes, cause.go).
	last := -1
	var anchor *cause
	follow := func(f *followup) {
		if anchor != nil {
			anchor.effects = append(anchor.effects, f)
			return
		}
		e.followers[last] = append(e.followers[last], f)
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		switch {
		case in.Scripted():
			// Tried first, by addScripted below.
		case in.From == cassettes.FromClient && in.Request != nil:
			var msg jsonrpc.Message // not kept: its method and params are
			if err := jsonrpc.ParseValidInto(&msg, in.Request); err != nil {
				return nil, fmt.Errorf("replayer: interaction %d: %w", i+1, err)
			}
			n := len(e.requests)
			e.requests = e.requests[:n+1]
			r := &e.requests[n]
			*r = recorded{index: i, pos: n, req: matcher.Request{Method: msg.Method, Params: msg.Params}, interaction: in}
			_, r.mrtrRetry = mcp.RequestState(msg.Params)
			r.times = in.Times
			if len(in.Exchange) == 0 && in.Response != nil && in.Response.Message != nil && in.Response.Batch <= math.MaxInt32 {
				r.lone, r.response, r.responseBatch = true, in.Response.Message, int32(in.Response.Batch)
				r.idAt = -1
				if start, end, ok := jsonrpc.IDSpan(r.response); ok && end <= math.MaxInt32 {
					r.idAt, r.idEnd = int32(start), int32(end)
				}
			}
			if err := e.index.add(r); err != nil {
				return nil, fmt.Errorf("replayer: interaction %d: %w", i+1, err)
			}
			e.byMethod[msg.Method] = append(e.byMethod[msg.Method], n)
			if msg.Method == "server/discover" && e.discover == nil && in.Response != nil && isResult(in.Response.Message) {
				e.discover = r
			}
			last, anchor = n, nil
		case in.From == cassettes.FromClient && in.Notification != nil:
			if a := e.addCause(in.Notification); a != nil {
				anchor = a
			}
		case in.From == cassettes.FromServer && in.Request != nil:
			f := &followup{raw: in.Request, request: true, batch: in.Batch, at: in.AtMs, before: in.BeforeResponse, afterExchange: in.AfterExchange, get: onStream(in), index: i}
			if m, err := jsonrpc.Parse(in.Request); err == nil {
				f.method = m.Method
			}
			if in.Response != nil && in.Response.From == cassettes.FromClient {
				f.expect = in.Response.Message
			}
			follow(f)
		case in.From == cassettes.FromServer && in.Notification != nil:
			follow(&followup{raw: in.Notification, batch: in.Batch, at: in.AtMs, before: in.BeforeResponse, afterExchange: in.AfterExchange, get: onStream(in), index: i})
		case in.From == cassettes.FromServer && in.Raw != nil && !jsonrpc.NoMessage([]byte(*in.Raw)):
			// (A line that is no message is not sent: echo.go.)
			follow(&followup{raw: []byte(*in.Raw), at: in.AtMs, before: in.BeforeResponse, afterExchange: in.AfterExchange, get: onStream(in), index: i})
		}
	}
	e.findNoMessages(c)
	e.shareLines()
	if err := e.addScripted(c, "cassette", 0, true); err != nil {
		return nil, err
	}
	e.warnUnreachable()
	e.live = map[*session]int{}
	e.prepareProtocol()
	return e, nil
}

// onStream reports whether a server message of its own came on a stream
// outside any request (the GET stream, a listen stream).
func onStream(in *cassettes.Interaction) bool {
	return in.HTTP != nil && in.HTTP.Stream != ""
}

func isResult(raw json.RawMessage) bool {
	m, err := jsonrpc.Parse(raw)
	return err == nil && m.Kind() == jsonrpc.KindResponse && m.Error == nil
}

// Stats are the engine's counters over all its sessions.
type Stats struct {
	// Sessions counts the sessions started: a stdio connection, an HTTP
	// session; the requests without a session of an HTTP handler share
	// one.
	Sessions int64
	// Messages counts the messages received from clients.
	Messages int64
	// Matched and Unmatched count requests answered from the recording and
	// requests that matched nothing.
	Matched, Unmatched int64
	// Scripted counts requests that a scripted interaction answered: an
	// overlay's, a --fault's, or one of the cassette's with "when" or
	// "fault" (a fault applied to the recorded answer included). They are
	// not counted as matched.
	Scripted int64
	// Unused counts recorded client requests that no session used.
	Unused int
	// NeverSent counts the server-initiated messages that ended sessions
	// never sent because the client message that caused them in the
	// recording never came (cause.go).
	NeverSent int64
}

// Stats returns the counters so far.
func (e *Engine) Stats() Stats {
	e.usedMu.Lock()
	used := e.usedCount
	e.usedMu.Unlock()
	return Stats{
		Sessions:  e.sessions.Load(),
		Messages:  e.stats.messages.Load(),
		Matched:   e.stats.matched.Load(),
		Unmatched: e.stats.unmatched.Load(),
		Scripted:  e.stats.scripted.Load(),
		Unused:    len(e.requests) - used,
		NeverSent: e.stats.neverSent.Load(),
	}
}

// Summary is the one-line summary printed at exit.
func (s Stats) String() string {
	out := fmt.Sprintf("%d messages, %d matched, %d unmatched, %d unused", s.Messages, s.Matched, s.Unmatched, s.Unused)
	if s.Scripted > 0 {
		out += fmt.Sprintf(", %d scripted", s.Scripted)
	}
	if s.NeverSent > 0 {
		out += fmt.Sprintf(", %d server messages never sent (their cause never came)", s.NeverSent)
	}
	return out
}

// Unused returns the cassette positions (1-based) of the recorded client
// requests that no session has used, in recorded order.
func (e *Engine) Unused() []int {
	e.usedMu.Lock()
	defer e.usedMu.Unlock()
	var out []int
	for i := range e.requests {
		r := &e.requests[i]
		if !e.used[r.index] {
			out = append(out, r.index+1)
		}
	}
	return out
}

// keepsNothing reports that the engine hands no client message to anyone
// who may keep it past its answer: no Options.OnRequest, and a log that
// is off or writes each line at once (another live log, the web view's
// above all, may keep what it is given).
func (e *Engine) keepsNothing() bool {
	return e.opts.OnRequest == nil && livelog.KeepsNothing(e.opts.Logger)
}

func (e *Engine) markUsed(r *recorded) {
	e.usedMu.Lock()
	if !e.used[r.index] {
		e.used[r.index] = true
		e.usedCount++
	}
	e.usedMu.Unlock()
}
