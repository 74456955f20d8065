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
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/internal/mcp"
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
	keep  int // see keepRecent

	qmu    sync.Mutex // guards queue and closed
	queue  []observed
	closed bool
	wake   chan struct{} // signals the builder (capacity 1)

	mu    sync.Mutex // guards state, dirty, saveErr and the early encodings
	state *builder
	dirty bool
	// early are the encodings the builder made of interactions as they
	// completed, by index, while their bytes were still in the cache;
	// earlyNext is the first index it has not looked at yet, earlyFinish
	// its own finisher (a Finisher is not shared between goroutines).
	early       map[int]part
	earlyNext   int
	earlyFinish *cassettes.Finisher
	chunk       []byte // where the next early encoding goes
	// saveErr is the last error of a save; Close reports it. logged is
	// the text of the last error logged, so that a save that fails again
	// the same way (a forbidden value stays in the cassette) does not
	// repeat it.
	saveErr error
	logged  string
	// completed says an interaction has completed (a request answered, a
	// notification): until then no save writes the file, so a record that
	// fails at once leaves no file and no existing cassette is replaced
	// by an empty one. written is the number of interactions the last
	// successful write held (-1 before the first); created the
	// directories New made for the file, removed by Close if nothing was
	// written.
	completed bool
	written   int
	created   []string

	// saveMu serialises the saves, and Cassette with them; it guards the
	// fields below, which only saves change.
	saveMu sync.Mutex
	// finish redacts and normalises each interaction before it is encoded.
	finish *cassettes.Finisher
	seed   maphash.Seed
	// parts are the encodings of the interactions still in memory, by
	// index, with the fingerprint each was made from: an interaction is
	// finished and encoded again only when it changed.
	parts map[int]part
	// spill holds the interactions that can no longer change, encoded,
	// out of memory (spill.go); nil while recording to no file.
	spill *spill
	// unspilled are encoded interactions that follow those in the spill
	// and could not be written to it yet.
	unspilled [][]byte
	// arena holds the encodings of the interactions being spilled, most
	// of unspilled's (write).
	arena []byte
	// info is the server's name and version from the spilled interaction
	// infoAt (-1 for none).
	info   *cassettes.ServerInfo
	infoAt int
	// saveCost is how long the last save took.
	saveCost time.Duration

	saveNow  chan struct{} // asks the saver for a save (capacity 1)
	done     chan struct{} // closed when the builder has drained the queue after Close
	saverOut chan struct{} // closed when the saver has stopped
	drained  chan chan struct{}
}

// part is an interaction's encoding (after a comma, as in the file).
type part struct {
	print uint64
	data  []byte
	info  *cassettes.ServerInfo
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
	return newRecorder(path, opts, keepRecent)
}

// newRecorder is New keeping the latest keep interactions in memory.
func newRecorder(path string, opts *Options, keep int) (*Recorder, error) {
	r := &Recorder{
		path:     path,
		keep:     keep,
		seed:     maphash.MakeSeed(),
		parts:    map[int]part{},
		infoAt:   -1,
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
	if r.earlyFinish, err = cassettes.NewFinisher(&r.opts.Save); err != nil {
		return nil, err
	}
	r.early = map[int]part{}
	c := cassettes.New()
	c.Meta = r.opts.Meta
	if c.Meta.RecordedAt == "" {
		c.Meta.RecordedAt = r.start.UTC().Format(time.RFC3339)
	}
	if c.Meta.RecordedBy == "" {
		c.Meta.RecordedBy = "mcpmock"
	}
	r.state = newBuilder(c, r.opts.Logger)
	// The builder lets a save in between the messages of a long batch.
	r.state.pause = func() {
		r.mu.Unlock()
		r.mu.Lock()
	}
	r.written = -1
	if path != "" {
		// The file is written once an interaction has completed (save);
		// the path is checked, and its directories made, now.
		if r.created, err = cassettes.PrepareWrite(path); err != nil {
			return nil, err
		}
		if r.spill, err = newSpill(path); err != nil {
			cassettes.RemoveCreated(r.created)
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
			for k, o := range batch {
				if k%pauseEvery == pauseEvery-1 {
					r.state.pause()
				}
				if r.state.addHTTP(o.from, o.data, r.offset(o.at), o.http) {
					completed = true
				}
			}
			r.encodeEarly()
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

// encodeEarly encodes the interactions that completed since the last
// batch, for the save that spills them: encoded now, while the messages
// just built are in the cache, an interaction costs a fraction of what it
// costs a save later, when its bytes have left the cache. A save uses an
// encoding only if the interaction did not change since (its
// fingerprint). Called by the builder with r.mu held.
func (r *Recorder) encodeEarly() {
	if r.path == "" {
		return
	}
	b := r.state
	end := b.base + len(b.c.Interactions)
	r.earlyNext = max(r.earlyNext, b.base)
	from := r.earlyNext
	for i := from; i < end && i < from+maxEarly; i++ {
		in := &b.c.Interactions[i-b.base]
		if !complete(in) {
			continue
		}
		if i == r.earlyNext {
			r.earlyNext++
		}
		if _, ok := r.early[i]; ok {
			continue
		}
		fp := cassettes.Fingerprint(r.seed, in)
		fin := *in
		r.earlyFinish.FinishInteraction(&fin)
		// Encodings go one after another into chunks of memory, each
		// left to the collector once the interactions in it are spilled.
		if need := 256 + 3*interactionSize(&fin); cap(r.chunk)-len(r.chunk) < need {
			r.chunk = make([]byte, 0, max(earlyChunk, need))
		}
		start := len(r.chunk)
		out, err := cassettes.AppendInteraction(append(r.chunk, ','), &fin)
		if err != nil {
			continue // the save encodes it again and reports the error
		}
		r.chunk = out
		r.early[i] = part{print: fp, data: out[start:len(out):len(out)], info: cassettes.ServerInfoOf(&fin)}
	}
}

// maxEarly bounds the interactions encodeEarly looks at in one batch.
const maxEarly = 4096

// earlyChunk is the size of the chunks the early encodings are written in.
const earlyChunk = 64 << 10

// complete reports an interaction that is unlikely to change: an answered
// request, a notification, a line that is not JSON.
func complete(in *cassettes.Interaction) bool {
	return in.Response != nil || in.Notification != nil || in.Raw != nil
}

// interactionSize is the size of the messages of in.
func interactionSize(in *cassettes.Interaction) int {
	n := len(in.Request) + len(in.Notification)
	for i := range in.Exchange {
		n += len(in.Exchange[i].Message)
	}
	if in.Response != nil {
		n += len(in.Response.Message)
	}
	return n
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
		start := time.Now()
		r.save(false)
		// Saves are coalesced: completed interactions that arrive in the
		// next moment go into the next save, so a busy session does not
		// keep a core and the disk busy rewriting the file (savePause).
		pause := time.NewTimer(savePause(time.Since(start), r.opts.FlushInterval))
		select {
		case <-pause.C:
		case <-r.done:
			pause.Stop()
			return
		}
	}
}

// savePause is how long the saver waits after a save that took cost.
//
// A save copies the file so far (in the kernel), so it grows with the
// recording: the pause is a multiple of what the save took, and saving
// takes a small share of the time however long the recording. The
// multiple is large, and the pause is bounded by the promise instead: an
// interaction completed just after a save began is written by the next
// one, which ends a pause and two saves' time later, and that must be
// within flush (one second), less a margin for the builder's gathering.
// Below minSaveInterval it never goes; a save that takes more than about
// a third of flush (a cassette of some hundreds of MiB) cannot keep the
// promise, and the saves then follow one another at that interval.
//
// Measured at 15,000 calls a session (an 18 MB cassette), interleaved, five
// rounds: the multiple of 40 with the bound used about 17 µs a call less
// CPU than the former multiple of 8 in three rounds, the same in two.
// Short sessions do not see it: their saves take a few milliseconds and
// the pause stays at minSaveInterval.
func savePause(cost, flush time.Duration) time.Duration {
	return max(minSaveInterval, min(saveCostFactor*cost, flush-2*cost-saveMargin))
}

// minSaveInterval is the least time between two saves while recording.
const minSaveInterval = 250 * time.Millisecond

// saveCostFactor: the pause after a save is this many times what the save
// took, unless the promise bounds it (savePause).
const saveCostFactor = 40

// saveMargin is what savePause leaves of the flush interval for the
// builder, which gathers messages for batchDelay before it takes them.
const saveMargin = 100 * time.Millisecond

// keepRecent is how many of the latest interactions stay in memory, as
// they were recorded, while recording to a file; older ones that can no
// longer change are spilled (spill.go).
const keepRecent = 32

// save writes the cassette; durable syncs it to the disk (the last save
// does; the ones while recording need only survive the process).
//
// The file is the head (version, meta), the spilled interactions copied
// from the spill file, the interactions still in memory (each finished and
// encoded again only when it changed), and the closing brackets, written to
// a temporary file renamed over the cassette.
func (r *Recorder) save(durable bool) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	r.mu.Lock()
	if !r.completed {
		if r.completed = r.state.anyCompleted(); !r.completed {
			r.mu.Unlock()
			return nil
		}
	}
	head := *r.state.c
	head.Interactions = nil
	head.Meta.Server = slices.Clone(head.Meta.Server)
	base := r.state.base
	var live []cassettes.Interaction
	var gone []cassettes.Interaction
	goneAt := base
	if r.spill != nil {
		gone = r.state.evict(r.keep)
		base = r.state.base
	}
	live = r.state.snapshot().Interactions
	// The builder's early encodings of these interactions: those that
	// leave memory are taken, the others copied.
	var early map[int]part
	if len(r.early) > 0 {
		early = make(map[int]part, len(gone)+len(live))
		for i := goneAt; i < base+len(live); i++ {
			if p, ok := r.early[i]; ok {
				early[i] = p
				if i < base {
					delete(r.early, i)
				}
			}
		}
	}
	r.dirty = false
	r.mu.Unlock()
	if r.path == "" {
		return nil
	}
	err := r.write(durable, &head, goneAt, gone, base, live, early)
	r.mu.Lock()
	r.saveErr = err
	logIt := err != nil && err.Error() != r.logged
	switch {
	case err == nil:
		r.written, r.logged = base+len(live), ""
	case logIt:
		r.logged = err.Error()
	}
	r.mu.Unlock()
	if logIt {
		r.opts.Logger.Error(err.Error())
	}
	return err
}

// write spills the interactions gone from memory (from index goneAt on),
// encodes the live ones (from index base on) and writes the file.
func (r *Recorder) write(durable bool, head *cassettes.Cassette, goneAt int, gone []cassettes.Interaction, base int, live []cassettes.Interaction, early map[int]part) error {
	// The interactions that leave memory are encoded one after another
	// into the arena, reused from save to save once they are spilled,
	// unless an encoding of them is at hand (encoded). An interaction that
	// cannot be encoded is left out, and the save reports it; the others
	// are not lost with it.
	if len(r.unspilled) == 0 {
		r.arena = r.arena[:0]
	}
	var encodeErr error
	for k := range gone {
		i := goneAt + k
		var data []byte
		var info *cassettes.ServerInfo
		if p, ok := r.encoded(i, cassettes.Fingerprint(r.seed, &gone[k]), early); ok {
			data, info = p.data, p.info
		} else {
			start := len(r.arena)
			out, in, err := r.appendFinished(append(r.arena, ','), i, &gone[k])
			if err != nil {
				encodeErr = cmp.Or(encodeErr, err)
				delete(r.parts, i)
				continue
			}
			r.arena, info = out, in
			data = r.arena[start:len(r.arena):len(r.arena)]
		}
		delete(r.parts, i)
		if info != nil && r.infoAt < 0 {
			r.info, r.infoAt = info, i
		}
		r.unspilled = append(r.unspilled, data)
	}
	// What could not be spilled (a full disk) stays in memory, written
	// from there, until a later save spills it.
	var spillErr error
	if len(r.unspilled) > 0 {
		if spillErr = r.spill.add(r.unspilled); spillErr == nil {
			r.unspilled = nil
			if cap(r.arena) > maxArena {
				r.arena = nil
			}
		}
	}
	for i := range r.parts {
		if i < base {
			delete(r.parts, i)
		}
	}
	info, infoAt := r.info, r.infoAt
	parts := make([][]byte, 0, len(r.unspilled)+len(live))
	parts = append(parts, r.unspilled...)
	for k := range live {
		p, err := r.encode(base+k, &live[k], early)
		if err != nil {
			encodeErr = cmp.Or(encodeErr, err)
			continue
		}
		parts = append(parts, p.data)
		if p.info != nil && (infoAt < 0 || base+k < infoAt) {
			info, infoAt = p.info, base+k
		}
	}
	r.finish.FinishHead(head)
	if head.Meta.ServerInfo == nil {
		head.Meta.ServerInfo = info
	}
	open, end, err := cassettes.EncodeHead(head)
	if err != nil {
		return err
	}
	if spillErr != nil {
		r.opts.Logger.Error(fmt.Sprintf("mcpmock: write the spill file: %v (the interactions stay in memory)", spillErr))
	}
	err = cassettes.WriteAtomic(r.path, durable, func(w io.Writer) error {
		var fw *forbidWriter
		if len(r.opts.Forbid) > 0 {
			fw = newForbidWriter(w, r.opts.Forbid)
			w = fw
		}
		err := r.spill.writeFile(w, open, parts, end)
		if fw != nil && fw.err != nil {
			return fw.err
		}
		return err
	})
	return cmp.Or(err, encodeErr)
}

// encode returns the finished encoding of interaction i, from the last
// save's or the builder's early one when the interaction did not change
// since.
func (r *Recorder) encode(i int, in *cassettes.Interaction, early map[int]part) (part, error) {
	fp := cassettes.Fingerprint(r.seed, in)
	if p, ok := r.encoded(i, fp, early); ok {
		r.parts[i] = p
		return p, nil
	}
	data, info, err := r.appendFinished([]byte{','}, i, in)
	if err != nil {
		return part{}, err
	}
	p := part{print: fp, data: data, info: info}
	r.parts[i] = p
	return p, nil
}

// encoded returns an encoding of interaction i made from the interaction
// as it is now (fingerprint fp): the last save's or the builder's.
func (r *Recorder) encoded(i int, fp uint64, early map[int]part) (part, bool) {
	if p, ok := r.parts[i]; ok && p.print == fp {
		return p, true
	}
	if p, ok := early[i]; ok && p.print == fp {
		return p, true
	}
	return part{}, false
}

// appendFinished appends the encoding of interaction i, finished
// (redacted, normalised), to dst, and gives the server's name and version
// if it holds them.
func (r *Recorder) appendFinished(dst []byte, i int, in *cassettes.Interaction) ([]byte, *cassettes.ServerInfo, error) {
	fin := *in
	r.finish.FinishInteraction(&fin)
	out, err := cassettes.AppendInteraction(dst, &fin)
	if err != nil {
		return dst, nil, fmt.Errorf("encode cassette: interaction %d: %w", i+1, err)
	}
	return out, cassettes.ServerInfoOf(&fin), nil
}

// maxArena is the most memory the arena keeps between saves.
const maxArena = 4 << 20

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

// pendingIDs returns the ids of the client requests that have no response yet.
func (r *Recorder) pendingIDs() []jsonrpc.ID {
	r.Sync()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.pending.ids()
}

// Cassette returns a copy of the cassette as recorded so far. While
// recording to a file, the interactions that were spilled out of memory
// (all but the latest ones, once they can no longer change) come back as
// they were saved: redacted and normalised.
func (r *Recorder) Cassette() *cassettes.Cassette {
	r.Sync()
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	r.mu.Lock()
	c := r.state.snapshot()
	r.mu.Unlock()
	if r.spill == nil || r.spill.n+len(r.unspilled) == 0 {
		return c
	}
	old, err := r.spill.load(r.path, r.unspilled)
	if err != nil {
		r.opts.Logger.Error(err.Error())
		return c
	}
	c.Interactions = append(old, c.Interactions...)
	return c
}

// Summary is the one-line summary printed at exit. It says what the file
// holds: nothing saved (no interaction completed, or every save failed),
// or only what the last successful save wrote.
func (r *Recorder) Summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	n := s.base + len(s.c.Interactions)
	where, after := "", ""
	switch {
	case r.path == "":
	case !r.completed:
		after = fmt.Sprintf("; nothing saved: no interaction completed, %s was not written", r.path)
	case r.written < 0:
		after = fmt.Sprintf("; nothing saved: %s was not written (the save failed)", r.path)
	case r.saveErr != nil:
		after = fmt.Sprintf("; %s holds only the %d interactions of the last successful save (the last save failed)", r.path, r.written)
	default:
		where = " to " + r.path
	}
	return fmt.Sprintf("recorded %d messages in %d interactions%s (%d requests, %d without response)%s",
		s.messages, n, where, s.requests, s.pending.len(), after)
}

// Close records what is still queued, writes the cassette a last time and
// stops. It is idempotent and returns the last save error, if any, which
// the live log (Options.Logger) has already shown. A recording in which no
// interaction completed writes no file: the path is left as it was.
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
		err := r.save(true)
		r.saveMu.Lock()
		r.spill.close()
		r.saveMu.Unlock()
		r.mu.Lock()
		if r.written < 0 {
			cassettes.RemoveCreated(r.created)
		}
		r.mu.Unlock()
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}

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
// must be in memory.
func (b *builder) at(i int) *cassettes.Interaction { return &b.c.Interactions[i-b.base] }

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
	b.c.Interactions = append(b.c.Interactions, in)
	b.landed = b.base + len(b.c.Interactions) - 1
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
		if _, dup := b.pending.get(msg.ID); dup {
			b.log.Warn(fmt.Sprintf("mcpmock: the client reused id %s while a request with it is in flight", msg.ID))
		}
		idx := b.base + len(b.c.Interactions)
		b.c.Interactions = append(b.c.Interactions, cassettes.Interaction{From: from, AtMs: at, Request: raw, Batch: batch})
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
