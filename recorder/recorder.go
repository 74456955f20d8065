// Package recorder is mcpmock's tap: it forwards MCP traffic between a real
// client and a real server unchanged, and writes what passed into a cassette.
//
// The Recorder is the transport-independent half: a tap hands it a copy of
// every message it forwarded (Observe), and the Recorder, on its own
// goroutine, groups the messages into interactions and keeps the cassette file
// up to date. Forwarding never waits for it. Stdio is the stdio tap:
//
//	rec, _ := recorder.New("weather.json", nil)
//	status, err := recorder.Stdio(ctx, []string{"weather-server"}, os.Stdin, os.Stdout, os.Stderr, rec, nil)
//	rec.Close()
package recorder

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// Options configure a Recorder. The zero value (or nil) is the default.
type Options struct {
	// Meta is written into the cassette (RecordedAt and RecordedBy are
	// filled in when empty).
	Meta cassettes.Meta
	// FlushInterval is the longest time between two writes of the cassette
	// while recording; 0 means one second. The cassette is also written
	// after each completed interaction.
	FlushInterval time.Duration
	// Logger receives the live log; nil means silent.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Save says how the cassette is prepared for its file: redaction rules
	// added to the defaults, timing kept (see cassettes.SaveOptions).
	Save cassettes.SaveOptions
	// Forbid are values that must not reach the cassette file: a save that
	// would write one (after redaction) is refused with ErrForbiddenValue
	// and the file is left as it was (forbid.go).
	Forbid []Forbidden
}

// Recorder builds a cassette from observed messages and saves it. Its
// methods are safe for concurrent use.
type Recorder struct {
	path  string
	opts  Options
	start time.Time

	qmu    sync.Mutex // guards queue and closed
	queue  []observed
	closed bool
	wake   chan struct{} // signals the builder (capacity 1)

	mu    sync.Mutex // guards state, dirty and saveErr
	state *builder
	dirty bool
	// saveErr is the last error of a save; Close reports it.
	saveErr error

	enc cassettes.IncrementalEncoder // re-encodes only what changed
	// finish redacts and normalises each snapshot before it is written;
	// only save uses it, and saves never overlap.
	finish *cassettes.Finisher

	saveNow  chan struct{} // asks the saver for a save (capacity 1)
	done     chan struct{} // closed when the builder has drained the queue after Close
	saverOut chan struct{} // closed when the saver has stopped
	drained  chan chan struct{}
}

type observed struct {
	from cassettes.Direction
	data []byte
	at   time.Time
	http *HTTPNote // how it travelled over HTTP; nil on stdio
}

// New returns a Recorder writing to path; an empty path records nothing to
// disk (the passthrough mode) but still builds the cassette and the live log.
func New(path string, opts *Options) (*Recorder, error) {
	r := &Recorder{
		path:     path,
		wake:     make(chan struct{}, 1),
		saveNow:  make(chan struct{}, 1),
		done:     make(chan struct{}),
		saverOut: make(chan struct{}),
		drained:  make(chan chan struct{}),
	}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.FlushInterval <= 0 {
		r.opts.FlushInterval = time.Second
	}
	if r.opts.Logger == nil {
		r.opts.Logger = livelog.Discard
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	r.start = r.opts.Now()
	finish, err := cassettes.NewFinisher(&r.opts.Save)
	if err != nil {
		return nil, err
	}
	r.finish = finish
	c := cassettes.New()
	c.Meta = r.opts.Meta
	if c.Meta.RecordedAt == "" {
		c.Meta.RecordedAt = r.start.UTC().Format(time.RFC3339)
	}
	if c.Meta.RecordedBy == "" {
		c.Meta.RecordedBy = "mcpmock"
	}
	r.state = newBuilder(c, r.opts.Logger)
	if path != "" {
		// Write the empty cassette at once: a valid file exists from the
		// first moment, whatever happens next.
		if err := r.save(true); err != nil {
			return nil, err
		}
	}
	go r.build()
	go r.saver()
	return r, nil
}

// Observe queues a copy of a message (or a batch, or a line that is not
// JSON) that passed the tap from the given side at the given time. It never
// blocks on the recording. Observe takes ownership of data.
func (r *Recorder) Observe(from cassettes.Direction, data []byte, at time.Time) {
	r.enqueue(observed{from: from, data: data, at: at})
}

// build is the goroutine that turns observed messages into interactions.
func (r *Recorder) build() {
	defer close(r.done)
	var batch []observed
	var acks []chan struct{} // Sync calls waiting for an empty queue
	for {
		r.qmu.Lock()
		batch, r.queue = r.queue, batch[:0]
		closed := r.closed
		r.qmu.Unlock()
		if len(batch) > 0 {
			completed := false
			r.mu.Lock()
			for _, o := range batch {
				if r.state.addHTTP(o.from, o.data, r.offset(o.at), o.http) {
					completed = true
				}
			}
			r.dirty = true
			r.mu.Unlock()
			clear(batch)
			if completed {
				select {
				case r.saveNow <- struct{}{}:
				default:
				}
			}
			continue
		}
		for _, a := range acks {
			close(a)
		}
		acks = acks[:0]
		if closed {
			return
		}
		select {
		case <-r.wake:
			// Let the burst that woke us gather before taking it: the
			// builder then wakes once per burst, not once per message,
			// and stays out of the way of the forwarding.
			gather := time.NewTimer(batchDelay)
			select {
			case <-gather.C:
			case ch := <-r.drained:
				gather.Stop()
				acks = append(acks, ch)
			}
		case ch := <-r.drained:
			acks = append(acks, ch)
		}
	}
}

// batchDelay is how long the builder lets observed messages gather before
// it takes them.
const batchDelay = 25 * time.Millisecond

func (r *Recorder) offset(at time.Time) cassettes.Millis {
	return cassettes.Millis(float64(at.Sub(r.start).Nanoseconds()) / 1e6)
}

// saver writes the cassette after completed interactions (coalesced) and at
// least every FlushInterval while something changed.
func (r *Recorder) saver() {
	defer close(r.saverOut)
	t := time.NewTicker(r.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.saveNow:
		case <-t.C:
		case <-r.done:
			return
		}
		r.mu.Lock()
		dirty := r.dirty
		r.mu.Unlock()
		if !dirty || r.path == "" {
			continue
		}
		r.save(false)
		// Saves are coalesced: completed interactions that arrive in the
		// next moment go into the next save, so a busy session does not
		// keep a core and the disk busy rewriting the file.
		pause := time.NewTimer(minSaveInterval)
		select {
		case <-pause.C:
		case <-r.done:
			pause.Stop()
			return
		}
	}
}

// minSaveInterval is the least time between two saves while recording;
// with the one-second flush it keeps the promise that an interaction
// completed more than a second ago is on disk.
const minSaveInterval = 250 * time.Millisecond

// save writes a snapshot of the cassette; durable syncs it to the disk
// (the last save does; the ones while recording need only survive the
// process).
func (r *Recorder) save(durable bool) error {
	r.mu.Lock()
	snap := r.state.snapshot()
	r.dirty = false
	r.mu.Unlock()
	if r.path == "" {
		return nil
	}
	r.finish.Finish(snap)
	err := cassettes.WriteAtomic(r.path, durable, func(w io.Writer) error {
		if len(r.opts.Forbid) == 0 {
			return r.enc.Write(w, snap)
		}
		fw := newForbidWriter(w, r.opts.Forbid)
		err := r.enc.Write(fw, snap)
		if fw.err != nil {
			return fw.err
		}
		return err
	})
	r.mu.Lock()
	r.saveErr = err
	r.mu.Unlock()
	if err != nil {
		r.opts.Logger.Error(err.Error())
	}
	return err
}

// Sync waits until every message observed before the call is in the
// cassette being built.
func (r *Recorder) Sync() {
	ch := make(chan struct{})
	select {
	case r.drained <- ch:
		select {
		case <-ch:
		case <-r.done:
		}
	case <-r.done:
	}
}

// Pending returns the ids of the client requests that have no response yet.
func (r *Recorder) Pending() []jsonrpc.ID {
	r.Sync()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.state.pendingOrder)
}

// Cassette returns a copy of the cassette as recorded so far.
func (r *Recorder) Cassette() *cassettes.Cassette {
	r.Sync()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.snapshot()
}

// Summary is the one-line summary printed at exit.
func (r *Recorder) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	where := ""
	if r.path != "" {
		where = fmt.Sprintf(" to %s", r.path)
	}
	return fmt.Sprintf("recorded %d messages in %d interactions%s (%d requests, %d without response)",
		s.messages, len(s.c.Interactions), where, s.requests, len(s.pendingOrder))
}

// Close records what is still queued, writes the cassette a last time and
// stops. It is idempotent and returns the last save error, if any.
func (r *Recorder) Close() error {
	r.qmu.Lock()
	already := r.closed
	r.closed = true
	r.qmu.Unlock()
	if !already {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	<-r.done
	<-r.saverOut
	if !already && r.path != "" {
		return r.save(true)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}

// builder holds the cassette being built and the state that groups
// messages into interactions. Only the build goroutine changes it, under
// Recorder.mu.
type builder struct {
	c   *cassettes.Cassette
	log *slog.Logger

	pending      map[jsonrpc.ID]int // client request id → interaction index
	pendingOrder []jsonrpc.ID       // in arrival order
	serverReqs   map[jsonrpc.ID]int // server-to-client request id → owning interaction
	topLevel     map[jsonrpc.ID]bool
	tokens       map[string]int // progress token → interaction
	started      map[int]cassettes.Millis
	// landed is the interaction that the last message went into; -1 for
	// none. The HTTP notes use it (http_note.go).
	landed int
	// hint, when >= 0, is the interaction that server messages belong to
	// (the request whose HTTP response stream carried them); noOwner says
	// they belong to none (the GET stream). Both are set by addHTTP for one
	// message.
	hint    int
	noOwner bool
	// exchanges maps an HTTP exchange number to the interactions its
	// client messages opened.
	exchanges map[uint64][]int
	batches   int
	messages  int
	requests  int
}

func newBuilder(c *cassettes.Cassette, log *slog.Logger) *builder {
	return &builder{c: c, log: log, pending: map[jsonrpc.ID]int{}, serverReqs: map[jsonrpc.ID]int{},
		topLevel: map[jsonrpc.ID]bool{}, tokens: map[string]int{}, started: map[int]cassettes.Millis{},
		landed: -1, hint: -1, exchanges: map[uint64][]int{}}
}

// snapshot copies the cassette: interactions are values, and the messages
// in them are never changed after they are set, so a shallow copy of each
// interaction with its exchange is enough.
func (b *builder) snapshot() *cassettes.Cassette {
	c := *b.c
	c.Interactions = make([]cassettes.Interaction, len(b.c.Interactions))
	for i, in := range b.c.Interactions {
		in.Exchange = slices.Clone(in.Exchange)
		if in.Response != nil {
			resp := *in.Response
			in.Response = &resp
		}
		if in.HTTP != nil {
			h := *in.HTTP
			h.EventIDs = slices.Clone(h.EventIDs)
			in.HTTP = &h
		}
		c.Interactions[i] = in
	}
	return &c
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
	}
	completed := false
	for _, el := range elems {
		if b.one(from, el, at, n) {
			completed = true
		}
	}
	return completed
}

func (b *builder) raw(from cassettes.Direction, data []byte, at cassettes.Millis, why string) {
	b.messages++
	dir := dirOf(from)
	livelog.Raw(b.log, dir, data, why)
	s := string(data)
	if from == cassettes.FromServer && len(b.pendingOrder) > 0 {
		idx := b.pending[b.pendingOrder[len(b.pendingOrder)-1]]
		in := &b.c.Interactions[idx]
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Raw: &s})
		b.landed = idx
		return
	}
	b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Raw: &s})
	b.landed = len(b.c.Interactions) - 1
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
		if _, dup := b.pending[msg.ID]; dup {
			b.log.Warn(fmt.Sprintf("mcpmock: the client reused id %s while a request with it is in flight", msg.ID))
			b.pendingOrder = slices.DeleteFunc(b.pendingOrder, func(id jsonrpc.ID) bool { return id == msg.ID })
		}
		idx := len(b.c.Interactions)
		b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Request: raw, Batch: batch})
		b.pending[msg.ID] = idx
		b.pendingOrder = append(b.pendingOrder, msg.ID)
		b.started[idx] = at
		b.landed = idx
		if tok := progressTokenKey(msg.Params); tok != "" {
			b.tokens[tok] = idx
		}
		return false
	}
	// A server-to-client request belongs to the client request in flight
	// (the latest one), or stands alone.
	if owner, ok := b.owner(); ok {
		in := &b.c.Interactions[owner]
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch})
		b.serverReqs[msg.ID] = owner
		b.landed = owner
		return false
	}
	idx := len(b.c.Interactions)
	b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Request: raw, Batch: batch})
	b.serverReqs[msg.ID] = idx
	b.topLevel[msg.ID] = true
	b.started[idx] = at
	b.landed = idx
	return false
}

// owner returns the client request that server messages are attributed to:
// the latest one still in flight.
func (b *builder) owner() (int, bool) {
	if b.noOwner {
		return 0, false
	}
	if b.hint >= 0 {
		return b.hint, true
	}
	if len(b.pendingOrder) == 0 {
		return 0, false
	}
	return b.pending[b.pendingOrder[len(b.pendingOrder)-1]], true
}

func (b *builder) notification(from cassettes.Direction, msg *jsonrpc.Message, raw json.RawMessage, at cassettes.Millis, batch int) {
	livelog.Message(b.log, dirOf(from), msg, 0, "")
	owner, ok := -1, false
	switch {
	case msg.Method == "notifications/progress":
		owner, ok = b.tokens[progressKeyOf(msg.Params)]
	case msg.Method == "notifications/cancelled":
		id, _ := jsonrpc.Member(msg.Params, "requestId")
		if from == cassettes.FromClient {
			owner, ok = b.pending[jsonrpc.ID(id)]
		} else {
			owner, ok = b.serverReqs[jsonrpc.ID(id)]
		}
	case from == cassettes.FromServer && !isStateChange(msg.Method):
		owner, ok = b.owner()
	}
	if ok {
		in := &b.c.Interactions[owner]
		in.Exchange = append(in.Exchange, cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch})
		b.landed = owner
		return
	}
	b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Notification: raw, Batch: batch})
	b.landed = len(b.c.Interactions) - 1
}

// isStateChange reports notifications about the server's state rather than
// about a request: they are recorded in their place in the session.
func isStateChange(method string) bool {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated":
		return true
	}
	return false
}

func (b *builder) response(from cassettes.Direction, msg *jsonrpc.Message, raw json.RawMessage, at cassettes.Millis, batch int) bool {
	if from == cassettes.FromServer {
		idx, ok := b.pending[msg.ID]
		if !ok {
			livelog.Message(b.log, dirOf(from), msg, 0, "answers no request")
			b.rawMessage(from, raw, at)
			return false
		}
		livelog.Message(b.log, dirOf(from), msg, time.Duration(float64(at-b.started[idx])*1e6), "")
		delete(b.pending, msg.ID)
		b.pendingOrder = slices.DeleteFunc(b.pendingOrder, func(id jsonrpc.ID) bool { return id == msg.ID })
		b.c.Interactions[idx].Response = &cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch}
		b.landed = idx
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
	in := &b.c.Interactions[idx]
	if b.topLevel[msg.ID] {
		delete(b.topLevel, msg.ID)
		livelog.Message(b.log, dirOf(from), msg, time.Duration(float64(at-b.started[idx])*1e6), "")
		in.Response = &cassettes.Message{From: from, AtMs: at, Message: raw, Batch: batch}
		b.landed = idx
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
	b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Raw: &s})
	b.landed = len(b.c.Interactions) - 1
}

func progressTokenKey(params json.RawMessage) string {
	meta, err := jsonrpc.Member(params, "_meta")
	if err != nil || meta == nil {
		return ""
	}
	tok, _ := jsonrpc.Member(meta, "progressToken")
	return string(tok)
}

func progressKeyOf(params json.RawMessage) string {
	tok, _ := jsonrpc.Member(params, "progressToken")
	return string(tok)
}
