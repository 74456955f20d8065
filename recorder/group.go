package recorder

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/grow"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// builder holds the cassette being built and the state that groups
// messages into interactions. Only the build goroutine changes it, under
// Recorder.mu, and the saver, which takes the interactions that can no
// longer change out of it (evict).
//
// Every step it takes for a message costs O(1) amortized, however many
// requests are pending or how big a batch is (BenchmarkBatch,
// BenchmarkHTTPPending): the saver waits for Recorder.mu, and a cost that
// grows with the session would keep it from the durability promise.
type builder struct {
	// c.Interactions are the interactions in memory: the cassette's
	// interactions from index base on. Every index below (pending, tokens,
	// landed...) counts from the start of the cassette (at turns it into
	// one of c.Interactions), so that evict moves none of them.
	c    *cassettes.Cassette
	base int
	log  *slog.Logger
	// pause, when set, is called every pauseEvery messages of one batch,
	// with the builder in a consistent state: the build goroutine lets the
	// saver have Recorder.mu in the middle of a big batch.
	pause func()

	pending    pendingSet         // client requests waiting for their response
	serverReqs map[jsonrpc.ID]int // server-to-client request id → owning interaction
	topLevel   map[jsonrpc.ID]bool
	tokens     map[string]int // progress token → interaction
	// tokenOrder is the tokens in the order they came (their interactions
	// in increasing order), for evict to forget those of the interactions
	// gone.
	tokenOrder fifo[tokenAt]
	// landed is the interaction that the last message went into; -1 for
	// none. The HTTP notes use it (http_note.go).
	landed int
	// hint, when >= 0, is the interaction that server messages belong to
	// (the request whose HTTP response stream carried them); noOwner says
	// they belong to none (the GET stream). Both are set by addHTTP for one
	// message. listenSeen says that the client messages just added hold a
	// subscriptions/listen request.
	hint       int
	noOwner    bool
	listenSeen bool
	// asked is the client request recorded last, until a client
	// notification (which replay's server messages may follow instead);
	// the client's replies and lines that are no message leave it, as
	// they do replay's anchor; -1 for none. A server message
	// of its own that comes before its response is marked so (ownMessage).
	asked int
	// exchanges maps an HTTP exchange number to what its client messages
	// opened; exchangeOrder is the exchanges in the order they came, for
	// evict to forget those whose interactions are all gone.
	exchanges     map[uint64]*exchange
	exchangeOrder fifo[uint64]
	batches       int
	messages      int
	requests      int
	// checking says the contract checks are on (contract.go): each message
	// goes into checks, in order, for the recorder to hand to them.
	checking bool
	checks   []contractEvent
	// done are the interactions completed since the recorder last looked
	// (encodeEarly).
	done []int
	// touched are the interactions added or handed out by at (to be
	// changed) since the saver last took them (takeChanged), with repeats;
	// allTouched says that more came than are worth listing (no save
	// takes them while recording to no file): take them all.
	touched    []int
	allTouched bool
}

// tokenAt is a progress token and the interaction it was given for.
type tokenAt struct {
	token string
	idx   int
}

// exchange is what the client messages of one HTTP exchange opened.
type exchange struct {
	idxs []int // the interactions, in increasing order
	// next is the first of idxs that may still wait for its response (the
	// ones before it are answered, or are not requests); firstReq is the
	// first request of idxs, -1 for none.
	next     int
	firstReq int
	// listen says that the exchange is a subscriptions/listen request.
	listen bool
}

// pauseEvery is how many messages of one batch the builder handles between
// two pauses (builder.pause).
const pauseEvery = 1024

func newBuilder(c *cassettes.Cassette, log *slog.Logger) *builder {
	return &builder{c: c, log: log, serverReqs: map[jsonrpc.ID]int{},
		topLevel: map[jsonrpc.ID]bool{}, tokens: map[string]int{},
		landed: -1, hint: -1, asked: -1, exchanges: map[uint64]*exchange{}}
}

// at returns interaction i (counted from the start of the cassette), which
// must be in memory, for the builder to read or change: it is noted as
// touched, and the next save finishes and encodes it again (takeChanged).
func (b *builder) at(i int) *cassettes.Interaction {
	b.touch(i)
	return &b.c.Interactions[i-b.base]
}

// push adds interaction in after the last and returns its index.
func (b *builder) push(in cassettes.Interaction) int {
	i := b.base + len(b.c.Interactions)
	b.c.Interactions = append(grow.Slice(b.c.Interactions, 1), in)
	b.touch(i)
	return i
}

// touch notes that interaction i changed (at, push).
func (b *builder) touch(i int) {
	if b.allTouched {
		return
	}
	if len(b.touched) >= maxTouched+4*len(b.c.Interactions) {
		b.touched, b.allTouched = nil, true
		return
	}
	b.touched = append(b.touched, i)
}

// maxTouched (beyond 4 a recorded interaction in memory) is the most
// touches the builder lists before it takes all as touched.
const maxTouched = 1 << 16

// evict takes the interactions that can no longer change out of memory,
// from the first on, and returns them: all but the latest keep, up to the
// first one still open (a client request waiting for its response, or one
// whose server-to-client request waits for the client's reply). It does so
// in batches: only when twice keep are in memory. A progress notification
// or an HTTP note that comes for an interaction already gone is recorded as
// a message of its own in its place.
func (b *builder) evict(keep int) []cassettes.Interaction {
	n := len(b.c.Interactions)
	if n < 2*keep {
		return nil
	}
	cut := n - keep
	if i, ok := b.pending.oldest(); ok {
		cut = min(cut, i-b.base)
	}
	// Server-to-client requests wait for the client's reply: a few at a
	// time.
	for _, i := range b.serverReqs {
		cut = min(cut, i-b.base)
	}
	if cut <= 0 {
		return nil
	}
	gone := b.c.Interactions[:cut:cut]
	rest := make([]cassettes.Interaction, n-cut, max(n-cut, 2*keep))
	copy(rest, b.c.Interactions[cut:])
	b.c.Interactions = rest
	b.base += cut
	for t, ok := b.tokenOrder.front(); ok && t.idx < b.base; t, ok = b.tokenOrder.front() {
		if b.tokens[t.token] == t.idx {
			delete(b.tokens, t.token)
		}
		b.tokenOrder.pop()
	}
	for ex, ok := b.exchangeOrder.front(); ok; ex, ok = b.exchangeOrder.front() {
		if e := b.exchanges[ex]; e != nil {
			if e.idxs[len(e.idxs)-1] >= b.base {
				break
			}
			delete(b.exchanges, ex)
		}
		b.exchangeOrder.pop()
	}
	return gone
}

// anyCompleted reports whether an interaction has completed
// (cassettes.Interaction.Completed).
func (b *builder) anyCompleted() bool {
	if b.base > 0 {
		return true
	}
	for i := range b.c.Interactions {
		if b.c.Interactions[i].Completed() {
			return true
		}
	}
	return false
}

// snapshot copies the cassette (copyOf each interaction).
func (b *builder) snapshot() *cassettes.Cassette {
	c := *b.c
	c.Interactions = make([]cassettes.Interaction, len(b.c.Interactions))
	for i := range b.c.Interactions {
		c.Interactions[i] = copyOf(&b.c.Interactions[i])
	}
	return &c
}

// copyOf copies an interaction for a save or a snapshot: interactions are
// values, and the messages in them are never changed after they are set,
// so a shallow copy with its exchange is enough.
func copyOf(in *cassettes.Interaction) cassettes.Interaction {
	c := *in
	c.Exchange = slices.Clone(in.Exchange)
	if in.Response != nil {
		resp := *in.Response
		c.Response = &resp
	}
	if in.HTTP != nil {
		h := *in.HTTP
		h.EventIDs = slices.Clone(h.EventIDs)
		c.HTTP = &h
	}
	return c
}

// takeChanged returns a copy (copyOf) of each interaction in memory that
// was touched since the saver last took them, or that encoded does not
// hold, with its index, in increasing order; the others are as the saver
// last took them. A save so costs a copy and an encoding of what changed
// only, not of every request still waiting for its answer (100,000
// pending: each save copied them all, 20 MB).
func (b *builder) takeChanged(encoded func(i int) bool) ([]int, []cassettes.Interaction) {
	touched := make([]bool, len(b.c.Interactions))
	for _, i := range b.touched {
		if i >= b.base {
			touched[i-b.base] = true
		}
	}
	all := b.allTouched
	b.touched, b.allTouched = b.touched[:0], false
	var idx []int
	for k := range b.c.Interactions {
		if i := b.base + k; all || touched[k] || !encoded(i) {
			idx = append(idx, i)
		}
	}
	ins := make([]cassettes.Interaction, len(idx))
	for k, i := range idx {
		ins[k] = copyOf(&b.c.Interactions[i-b.base])
	}
	return idx, ins
}

// add records one observed unit and reports whether it completed an
// interaction (a response arrived).
func (b *builder) add(from cassettes.Direction, data []byte, at cassettes.Millis) bool {
	elems, batch, err := jsonrpc.SplitBatch(data)
	if err != nil || (batch && len(elems) == 0) {
		b.raw(from, data, at, "not JSON-RPC")
		return false
	}
	n := 0
	if batch {
		b.batches++
		n = b.batches
		if from == cassettes.FromClient {
			// Each request or notification of it becomes an interaction:
			// grown message by message, a slice of 100,000 is copied
			// whole a few dozen times, and the collector waits for each
			// copy to end.
			b.c.Interactions = grow.Slice(b.c.Interactions, len(elems))
		}
	}
	completed := false
	for k, el := range elems {
		if b.one(from, el, at, n) {
			completed = true
		}
		if b.pause != nil && k%pauseEvery == pauseEvery-1 && k < len(elems)-1 {
			b.pause()
		}
	}
	return completed
}

func (b *builder) raw(from cassettes.Direction, data []byte, at cassettes.Millis, why string) {
	b.messages++
	dir := dirOf(from)
	livelog.Raw(b.log, dir, data, why)
	s := string(data)
	if idx, ok := b.owner(); ok && from == cassettes.FromServer {
		in := b.at(idx)
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Raw: &s})
		b.landed = idx
		return
	}
	b.ownMessage(cassettes.Interaction{From: from, AtMs: at, Raw: &s})
}

// ownMessage adds an interaction of its own; one of the server that comes
// while the last client message, a request, awaits its response is marked
// BeforeResponse (and AfterExchange), so that replay keeps its place
// before that response whether or not the cassette keeps time offsets.
func (b *builder) ownMessage(in cassettes.Interaction) int {
	if in.From == cassettes.FromServer && b.asked >= b.base && b.at(b.asked).Response == nil {
		in.BeforeResponse, in.AfterExchange = true, len(b.at(b.asked).Exchange)
	}
	b.landed = b.push(in)
	if complete(&in) {
		b.done = append(b.done, b.landed)
	}
	return b.landed
}

func dirOf(from cassettes.Direction) string {
	if from == cassettes.FromClient {
		return livelog.ToServer
	}
	return livelog.ToClient
}

func (b *builder) one(from cassettes.Direction, raw json.RawMessage, at cassettes.Millis, batch int) bool {
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		b.raw(from, raw, at, "not JSON-RPC: "+err.Error())
		return false
	}
	b.messages++
	if b.checking {
		b.checks = append(b.checks, contractEvent{msg: msg, index: b.messages, batch: batch > 0})
	}
	raw = json.RawMessage(msg.Raw)
	switch msg.Kind() {
	case jsonrpc.KindRequest:
		return b.request(from, msg, raw, at, batch)
	case jsonrpc.KindNotification:
		b.notification(from, msg, raw, at, batch)
		return false
	default:
		return b.response(from, msg, raw, at, batch)
	}
}

func (b *builder) request(from cassettes.Direction, msg *jsonrpc.Message, raw json.RawMessage, at cassettes.Millis, batch int) bool {
	livelog.Message(b.log, dirOf(from), msg, 0, "")
	if from == cassettes.FromClient {
		b.requests++
		// (A reused id in flight is the contract's duplicateId.)
		idx := b.push(cassettes.Interaction{From: from, AtMs: at, Request: raw, Batch: batch})
		b.pending.add(msg.ID, idx)
		b.landed, b.asked = idx, idx
		if tok := string(mcp.ProgressToken(msg.Params)); tok != "" {
			b.tokens[tok] = idx
			b.tokenOrder.push(tokenAt{tok, idx})
		}
		if msg.Method == "subscriptions/listen" {
			b.listenSeen = true
		}
		return false
	}
	// A server-to-client request belongs to the client request in flight
	// (the latest one), or stands alone.
	if owner, ok := b.owner(); ok {
		in := b.at(owner)
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch})
		b.serverReqs[msg.ID] = owner
		b.landed = owner
		return false
	}
	idx := b.ownMessage(cassettes.Interaction{From: from, AtMs: at, Request: raw, Batch: batch})
	b.serverReqs[msg.ID] = idx
	b.topLevel[msg.ID] = true
	return false
}

// owner returns the client request that server messages are attributed to:
// the latest one still in flight.
func (b *builder) owner() (int, bool) {
	if b.noOwner {
		return 0, false
	}
	if b.hint >= b.base {
		return b.hint, true
	}
	return b.pending.latest()
}

func (b *builder) notification(from cassettes.Direction, msg *jsonrpc.Message, raw json.RawMessage, at cassettes.Millis, batch int) {
	livelog.Message(b.log, dirOf(from), msg, 0, "")
	if from == cassettes.FromClient {
		b.asked = -1
	}
	owner, ok := -1, false
	switch {
	case msg.Method == "notifications/progress":
		owner, ok = b.tokens[progressKeyOf(msg.Params)]
		ok = ok && owner >= b.base
	case msg.Method == "notifications/cancelled":
		id, _ := jsonrpc.Member(msg.Params, "requestId")
		if from == cassettes.FromClient {
			owner, ok = b.pending.get(jsonrpc.ID(id))
		} else {
			owner, ok = b.serverReqs[jsonrpc.ID(id)]
		}
	case from == cassettes.FromServer && !mcp.SubscriptionNotification(msg.Method):
		owner, ok = b.owner()
	}
	if ok {
		in := b.at(owner)
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch})
		b.landed = owner
		return
	}
	b.ownMessage(cassettes.Interaction{From: from, AtMs: at, Notification: raw, Batch: batch})
}

func (b *builder) response(from cassettes.Direction, msg *jsonrpc.Message, raw json.RawMessage, at cassettes.Millis, batch int) bool {
	if from == cassettes.FromServer {
		idx, ok := b.pending.remove(msg.ID)
		if !ok {
			livelog.Message(b.log, dirOf(from), msg, 0, "answers no request")
			b.rawMessage(from, raw, at)
			return false
		}
		in := b.at(idx)
		livelog.Message(b.log, dirOf(from), msg, latency(in, at), "")
		in.Response = &cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch}
		b.landed = idx
		b.done = append(b.done, idx)
		return true
	}
	// The client's reply to a server-to-client request.
	idx, ok := b.serverReqs[msg.ID]
	if !ok {
		livelog.Message(b.log, dirOf(from), msg, 0, "answers no request")
		b.rawMessage(from, raw, at)
		return false
	}
	delete(b.serverReqs, msg.ID)
	in := b.at(idx)
	if b.topLevel[msg.ID] {
		delete(b.topLevel, msg.ID)
		livelog.Message(b.log, dirOf(from), msg, latency(in, at), "")
		in.Response = &cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch}
		b.landed = idx
		b.done = append(b.done, idx)
		return true
	}
	livelog.Message(b.log, dirOf(from), msg, 0, "")
	in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch})
	b.landed = idx
	return false
}

// rawMessage keeps a message that fits nowhere (a response to no request)
// as raw text in its place.
func (b *builder) rawMessage(from cassettes.Direction, raw json.RawMessage, at cassettes.Millis) {
	s := string(raw)
	b.ownMessage(cassettes.Interaction{From: from, AtMs: at, Raw: &s})
}

// latency is the time from the request that opened in to a response at.
func latency(in *cassettes.Interaction, at cassettes.Millis) time.Duration {
	return time.Duration(float64(at-in.AtMs) * 1e6)
}

func progressKeyOf(params json.RawMessage) string {
	tok, _ := jsonrpc.Member(params, "progressToken")
	return string(tok)
}
