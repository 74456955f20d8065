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
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
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

	// noContract turns the contract checks off (contract.go), for the
	// benchmark that measures their cost.
	noContract bool
	// noSaveFirst: no message waits for a save (saveFirst), for a
	// benchmark that times the save itself.
	noSaveFirst bool
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
	// contract checks the protocol's contract on what passed (contract.go);
	// nil when off.
	contract *contract
	checks   *worker[contractEvent] // runs contract's checks
	dirty    bool
	// early encodes interactions as they complete (early.go); nil while
	// recording to no file.
	early *earlyEncoder
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
	// finishers are the finishers of the other processors among which a
	// save shares a big encoding (encodeMany); used by the saver only.
	finishers []*cassettes.Finisher
	seed      maphash.Seed
	// parts are the encodings of the interactions still in memory, by
	// index, with the fingerprint each was made from: an interaction is
	// finished and encoded again only when it changed.
	parts parts
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
	// saveCost is how long the last save took, by the clock; the saver
	// paces the saves by it (savePause).
	saveCost time.Duration

	saveNow chan struct{} // asks the saver for a save (capacity 1)
	// waiting are the messages whose Observe waits for a save that holds
	// them (saveFirst), built since the last save took its snapshot; the
	// builder adds them and sends on urgent, which ends the saver's pause.
	// Guarded by mu.
	waiting  []chan struct{}
	urgent   chan struct{} // capacity 1
	done     chan struct{} // closed when the builder has drained the queue after Close
	saverOut chan struct{} // closed when the saver has stopped
	drained  chan chan struct{}
}

type observed struct {
	from cassettes.Direction
	// saved, when not nil, is closed once a save holds the message
	// (saveFirst).
	saved chan struct{}
	data  []byte
	at    time.Time
	http  *HTTPNote // how it travelled over HTTP; nil on stdio
	// header is the HTTP request of a client message that has no HTTP
	// note (a stdio bridge's), for the contract checks; ended marks the
	// end of the HTTP exchange http.Exchange (contract.go).
	header http.Header
	ended  bool
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
		infoAt:   -1,
		wake:     make(chan struct{}, 1),
		saveNow:  make(chan struct{}, 1),
		urgent:   make(chan struct{}, 1),
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
	r.start = r.now()
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
	if !r.opts.noContract {
		r.contract = newContract(r.opts.Logger)
		r.checks = newWorker(r.contract.run)
		r.state.checking = true
	}
	// The builder lets a save in between the messages of a long batch.
	r.state.pause = func() {
		r.handOff()
		r.mu.Unlock()
		r.mu.Lock()
	}
	r.written = -1
	if path != "" {
		// The file is written once an interaction has completed (save);
		// the path is checked, and its directories made, now.
		if r.created, err = cassettefile.PrepareWrite(path); err != nil {
			return nil, err
		}
		if r.spill, err = newSpill(path); err != nil {
			cassettefile.RemoveCreated(r.created)
			return nil, err
		}
		earlyFinish, err := cassettes.NewFinisher(&r.opts.Save)
		if err != nil {
			return nil, err
		}
		r.early = newEarlyEncoder(r.seed, earlyFinish)
	}
	go r.build()
	go r.saver()
	return r, nil
}

// Observe queues a copy of a message (or a batch, or a line that is not
// JSON) that passed the tap from the given side at the given time. It does
// not wait for the recording, but for a large batch of the server's
// (saveFirst), which it returns once a save holds. Observe takes ownership
// of data.
func (r *Recorder) Observe(from cassettes.Direction, data []byte, at time.Time) {
	r.enqueue(observed{from: from, data: data, at: at})
}

// build is the goroutine that turns observed messages into interactions.
func (r *Recorder) build() {
	defer close(r.done)
	if r.early != nil {
		defer r.early.close()
	}
	if r.checks != nil {
		defer r.checks.close()
	}
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
				if r.checks != nil {
					u := o
					r.state.checks = append(r.state.checks, contractEvent{unit: &u})
				}
				if o.ended {
					continue
				}
				if r.state.addHTTP(o.from, o.data, r.offset(o.at), o.http) {
					completed = true
				}
				if o.saved != nil {
					r.waiting = append(r.waiting, o.saved)
				}
			}
			r.handOff()
			r.dirty = true
			urgent := len(r.waiting) > 0
			r.mu.Unlock()
			clear(batch)
			if urgent {
				select {
				case r.urgent <- struct{}{}:
				default:
				}
			}
			if completed || urgent {
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

// now is the time by the Recorder's clock (Options.Now). Everything in the
// recorder that reads the time reads it here: the start of the recording,
// the time a tap observed a message, the cost of a save.
func (r *Recorder) now() time.Time { return r.opts.Now() }

// offset is at as an offset from the start of the recording.
func (r *Recorder) offset(at time.Time) cassettes.Millis {
	return cassettes.Millis(float64(at.Sub(r.start).Nanoseconds()) / 1e6)
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
	warnings := 0
	if r.contract != nil {
		r.checks.wait()
		_, warnings = r.contract.list()
	}
	return fmt.Sprintf("recorded %d messages in %d interactions%s (%d requests, %d without response, %s)%s",
		s.messages, n, where, s.requests, s.pending.len(), contractCount(warnings), after)
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
			cassettefile.RemoveCreated(r.created)
		}
		r.mu.Unlock()
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}
