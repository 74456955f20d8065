package recorder

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
)

// part is an interaction's encoding (after a comma, as in the file).
type part struct {
	print uint64
	data  []byte
	info  *cassettes.ServerInfo
}

// parts are the encodings of the interactions in memory by index, as the
// saves keep them: those from base on, in order, a nil data for none. A
// save looks up every interaction in memory; with 100,000 requests
// pending, a map's lookups were a fifth of a save.
type parts struct {
	base int
	p    []part
}

func (ps *parts) get(i int) (part, bool) {
	if k := i - ps.base; k >= 0 && k < len(ps.p) && ps.p[k].data != nil {
		return ps.p[k], true
	}
	return part{}, false
}

func (ps *parts) set(i int, p part) {
	k := i - ps.base
	if k >= len(ps.p) {
		ps.p = append(ps.p, make([]part, k+1-len(ps.p))...)
	}
	ps.p[k] = p
}

func (ps *parts) forget(i int) {
	if k := i - ps.base; k >= 0 && k < len(ps.p) {
		ps.p[k] = part{}
	}
}

// drop forgets the encodings below index n, which left memory.
func (ps *parts) drop(n int) {
	k := min(max(n-ps.base, 0), len(ps.p))
	clear(ps.p[:k])
	ps.p, ps.base = ps.p[k:], ps.base+k
	if len(ps.p) == 0 {
		ps.p, ps.base = nil, n
	}
}

// handOff hands what the builder did since it last did so to the
// workers: the interactions completed since to the early encoder, the
// messages to the contract checks. Called by the builder with r.mu held.
func (r *Recorder) handOff() {
	b := r.state
	if r.early != nil {
		// (Interactions spilled since they completed are the save's.)
		b.done = slices.DeleteFunc(b.done, func(i int) bool { return i < b.base })
		r.early.submitEach(len(b.done), func(k int) earlyJob {
			return earlyJob{i: b.done[k], in: *b.at(b.done[k])}
		})
	}
	b.done = b.done[:0]
	if r.checks != nil {
		r.checks.submit(b.checks)
		clear(b.checks)
		b.checks = b.checks[:0]
	}
}

// saveFirst reports whether o is a message that the tap passes on (the end
// of its line, its body) only once a save holds it: a batch of the server's
// of at least saveFirstSize bytes, while recording to a file.
//
// DESIGN.md promises that a tap killed a second after an interaction
// completed leaves a cassette that holds it, whatever the load. Most
// messages cost the recording microseconds, and the saves that follow
// them (at least every second) keep the promise; but the answers to a
// batch of 100,000 requests come in one line that takes the recording
// about half a second of both processors to parse, encode and save, and
// two to three times as long beside a go test ./... (TestRecordBigBatch
// lost them now and then). Such a batch is passed on once it is saved, as
// a database acknowledges a commit once it is written: the promise then
// holds by construction, and the client waits for the recording of its
// batch only, about half a second for 100,000 answers.
func (r *Recorder) saveFirst(o *observed) bool {
	if r.path == "" || r.opts.noSaveFirst || o.from != cassettes.FromServer || len(o.data) < saveFirstSize {
		return false
	}
	data := bytes.TrimLeft(o.data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// saveFirstSize is the size from which a batch of the server's is saved
// before it is passed on (saveFirst): 512 KiB, about 14,000 answered pings,
// which the recording takes some 80 ms to save on an idle machine
// (BenchmarkBatchAnswered: 5.5 µs a request at 10,000).
const saveFirstSize = 512 << 10

// release closes the channels of messages waiting for a save (saveFirst).
func release(waiting []chan struct{}) {
	for _, ch := range waiting {
		close(ch)
	}
}

// encodeChunk is the size of the chunks that encodings are written in, the
// builder's early ones and a save's of the interactions it spills: one
// large buffer grown as it fills would copy all it holds at each growth
// (a batch of 100,000 answered calls spilled at once: 400 ms of a 1.1 s
// save).
const encodeChunk = 64 << 10

// complete reports an interaction that is unlikely to change: an answered
// request, a notification, a line that is not JSON.
func complete(in *cassettes.Interaction) bool {
	return in.Response != nil || in.Notification != nil || in.Raw != nil
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
		r.saveMu.Lock()
		cost := r.saveCost
		r.saveMu.Unlock()
		// Saves are coalesced: completed interactions that arrive in the
		// next moment go into the next save, so a busy session does not
		// keep a core and the disk busy rewriting the file (savePause).
		pause := time.NewTimer(savePause(cost, r.opts.FlushInterval))
		select {
		case <-pause.C:
		case <-r.urgent:
			pause.Stop()
		case <-r.done:
			pause.Stop()
			return
		}
	}
}

// savePause is how long the saver waits after a save that took cost.
//
// A save copies the file so far (in the kernel) and frees the one it
// replaces, so its cost grows with the recording, and a busy session
// completes interactions all the time: the pause is what the promise
// allows rather than what the saves need. An interaction completed just
// after a save began is written by the next one, which ends a pause and
// two saves' time later, and that must be within flush (one second), less
// a margin for the builder's gathering. The pause is busySaveInterval, or
// a multiple of what the save took when that is longer (saving then takes
// a small share of the time however long the recording), as far as the
// promise allows; below minSaveInterval it never goes, so a save that
// takes more than about a third of flush (a cassette of some hundreds of
// MiB) cannot keep the promise, and the saves then follow one another at
// that interval. A quiet session does not see the pause: its saves follow
// its interactions.
//
// Measured at 15,000 calls a session (an 18 MB cassette), interleaved, five
// rounds: the multiple of 40 with the bound used about 17 µs a call less
// CPU than the former multiple of 8 in three rounds, the same in two.
func savePause(cost, flush time.Duration) time.Duration {
	return max(minSaveInterval, min(max(busySaveInterval, saveCostFactor*cost), flush-2*cost-saveMargin))
}

// busySaveInterval is the pause after a quick save, when the promise
// allows it. Saving every 250 ms instead, a session of 2,000 calls at
// 1,600 a second spent a quarter of its recording work on saves
// (BenchmarkRecordWork).
const busySaveInterval = 750 * time.Millisecond

// minSaveInterval is the least time between two saves while recording.
const minSaveInterval = 250 * time.Millisecond

// saveCostFactor: the pause after a save is at least this many times what
// the save took, unless the promise bounds it (savePause).
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
	start := r.now()
	defer func() { r.saveCost = r.now().Sub(start) }()
	if r.early != nil {
		// The encodings of the interactions completed so far: the early
		// encoder is not slower at them than this save would be.
		r.early.wait()
	}
	r.mu.Lock()
	// The messages waiting for a save that holds them: this one does, or
	// finds nothing to save.
	defer release(r.waiting)
	r.waiting = nil
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
	var gone []cassettes.Interaction
	goneAt := base
	if r.spill != nil {
		gone = r.state.evict(r.keep)
		base = r.state.base
	}
	live := liveSet{base: base, n: len(r.state.c.Interactions)}
	live.idx, live.ins = r.state.takeChanged(func(i int) bool {
		_, ok := r.parts.get(i)
		return ok
	})
	// The early encodings of these interactions: those that leave memory
	// are taken, the others copied.
	var early map[int]part
	if r.early != nil {
		early = r.early.take(goneAt, live.end(), base)
	}
	r.dirty = false
	r.mu.Unlock()
	if r.path == "" {
		return nil
	}
	err := r.write(durable, &head, goneAt, gone, live, early)
	r.mu.Lock()
	r.saveErr = err
	logIt := err != nil && err.Error() != r.logged
	switch {
	case err == nil:
		r.written, r.logged = live.end(), ""
	case logIt:
		r.logged = err.Error()
	}
	r.mu.Unlock()
	if logIt {
		r.opts.Logger.Error(err.Error())
	}
	return err
}

// liveSet is what a save takes of the interactions in memory, from index
// base to base+n: a copy of those that changed since the last save took
// them (ins, at indices idx, in increasing order); the others are
// encoded as that save left them (Recorder.parts).
type liveSet struct {
	base, n int
	idx     []int
	ins     []cassettes.Interaction
}

func (l *liveSet) end() int { return l.base + l.n }

// write spills the interactions gone from memory (from index goneAt on),
// encodes those of live that changed and writes the file.
func (r *Recorder) write(durable bool, head *cassettes.Cassette, goneAt int, gone []cassettes.Interaction, live liveSet, early map[int]part) error {
	// The interactions that leave memory are encoded one after another
	// into the arena's chunks (encodeChunk), the last reused from save to
	// save once they are spilled, unless an encoding of them is at hand
	// (encodeMany). An interaction that cannot be encoded is left out, and
	// the save reports it; the others are not lost with it.
	if len(r.unspilled) == 0 {
		r.arena = r.arena[:0]
	}
	var encodeErr error
	for k, e := range r.encodeMany(goneAt, nil, gone, early, &r.arena) {
		i := goneAt + k
		if e.err != nil {
			encodeErr = cmp.Or(encodeErr, e.err)
			continue
		}
		if e.info != nil && r.infoAt < 0 {
			r.info, r.infoAt = e.info, i
		}
		r.unspilled = append(r.unspilled, e.data)
	}
	var spillErr error
	if len(r.unspilled) > 0 {
		if spillErr = r.spill.add(r.unspilled); spillErr == nil {
			r.unspilled = nil
			if cap(r.arena) > maxArena {
				r.arena = nil
			}
		}
	}
	r.parts.drop(live.base)
	info, infoAt := r.info, r.infoAt
	parts := make([][]byte, 0, len(r.unspilled)+live.n)
	parts = append(parts, r.unspilled...)
	changed := r.encodeMany(0, live.idx, live.ins, early, nil)
	for i := live.base; i < live.end(); i++ {
		p, ok := r.parts.get(i)
		if len(live.idx) > 0 && live.idx[0] == i {
			e := changed[0]
			live.idx, changed = live.idx[1:], changed[1:]
			if e.err != nil {
				// (Encoded again at the next save: its last encoding
				// is not what it holds now.)
				r.parts.forget(i)
				encodeErr = cmp.Or(encodeErr, e.err)
				continue
			}
			if p, ok = e.part, true; !e.kept {
				r.parts.set(i, p)
			}
		}
		if !ok {
			continue // (cannot be: takeChanged copied it)
		}
		parts = append(parts, p.data)
		if p.info != nil && (infoAt < 0 || i < infoAt) {
			info, infoAt = p.info, i
		}
	}
	r.finish.FinishHead(head)
	if head.Meta.ServerInfo == nil {
		head.Meta.ServerInfo = info
	}
	open, end, err := encodeHead(head)
	if err != nil {
		return err
	}
	if spillErr != nil {
		r.opts.Logger.Error(fmt.Sprintf("write the spill file: %v (the interactions stay in memory)", spillErr))
	}
	err = cassettefile.WriteAtomic(r.path, durable, func(w io.Writer) error {
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

// encoding is an interaction's encoding for a save, or why it has none.
type encoding struct {
	part
	err error
	// kept says the part is the last save's (r.parts), as it was.
	kept bool
}

// encodeMany gives the encodings of ins (interaction idx[k], or at+k when
// idx is nil, is ins[k]) for a save: the last save's or the builder's
// when the interaction did not change since (encoded), else a new one,
// finished (redacted, normalised). With an arena, new encodings go one
// after another into chunks of encodeChunk, the first into *arena;
// without, each is allocated on its own, at its size (the live
// interactions', kept from save to save, must not share the arena reused
// once it is spilled).
//
// Many interactions (the answers to a batch, all completed at once) are
// shared out among the processors, each with a finisher of its own: the
// save that follows them is what the durability promise waits for, and
// on a loaded machine a process gets a share of the processors by its
// threads. A save of a batch of 100,000 answered pings, under the load of
// a go test ./... beside it, once took 0.8 s of the second.
func (r *Recorder) encodeMany(at int, idx []int, ins []cassettes.Interaction, early map[int]part, arena *[]byte) []encoding {
	out := make([]encoding, len(ins))
	// Only the first handshake's answer names the server (ServerInfoOf):
	// once found, later interactions need not be looked at for it.
	infoBefore := math.MaxInt
	if r.infoAt >= 0 {
		infoBefore = r.infoAt
	}
	var chunk []byte
	if arena != nil {
		chunk = *arena
	}
	workers := r.encoders(len(ins))
	// span is the indices of ins[lo:hi]: idx's, or from at+lo on.
	span := func(lo, hi int) (int, []int) {
		if idx == nil {
			return at + lo, nil
		}
		return 0, idx[lo:hi]
	}
	if len(workers) == 1 {
		from, idx := span(0, len(ins))
		chunk = r.encodeSpan(r.finish, chunk, arena != nil, infoBefore, from, idx, ins, early, out)
	} else {
		var wg sync.WaitGroup
		size := (len(ins) + len(workers) - 1) / len(workers)
		for j, fin := range workers[1:] {
			lo, hi := (j+1)*size, min((j+2)*size, len(ins))
			from, idx := span(lo, hi)
			wg.Go(func() {
				r.encodeSpan(fin, nil, arena != nil, infoBefore, from, idx, ins[lo:hi], early, out[lo:hi])
			})
		}
		from, idx := span(0, size)
		chunk = r.encodeSpan(workers[0], chunk, arena != nil, infoBefore, from, idx, ins[:size], early, out[:size])
		wg.Wait()
	}
	if arena != nil {
		*arena = chunk
	}
	return out
}

// encodeSpan is encodeMany's work for one processor, with finisher fin,
// into chunks from chunk on when chunked; it returns the last chunk.
// Workers read r.parts and early, which nothing changes meanwhile.
func (r *Recorder) encodeSpan(fin *cassettes.Finisher, chunk []byte, chunked bool, infoBefore, at int, idx []int, ins []cassettes.Interaction, early map[int]part, out []encoding) []byte {
	for k := range ins {
		i, in := at+k, &ins[k]
		if idx != nil {
			i = idx[k]
		}
		fp := fingerprint(r.seed, in)
		if p, ok := r.parts.get(i); ok && p.print == fp {
			out[k].part, out[k].kept = p, true
			continue
		}
		if p, ok := early[i]; ok && p.print == fp {
			out[k].part = p
			continue
		}
		var data []byte
		var done cassettes.Interaction
		var err error
		if chunk, data, done, err = appendFinished(fin, chunk, chunked, in); err != nil {
			out[k].err = fmt.Errorf("encode cassette: interaction %d: %w", i+1, err)
			continue
		}
		out[k].part = part{print: fp, data: data}
		if i < infoBefore {
			out[k].info = cassettes.ServerInfoOf(&done)
		}
	}
	return chunk
}

// appendFinished finishes (redacts, normalises) a copy of in with fin and
// appends its encoding, after a comma, to chunk. When chunked, chunk is
// one of a chunk of encodeChunk, made when chunk has not the room
// appendInteraction asks for (with less, it would grow, copying the whole
// chunk). Else chunk is a scratch buffer, and the encoding is copied out
// of it at its size: made with the room asked for, an encoding kept on
// its own held twice its size (with 80,000 requests pending, 40 of the
// tap's 105 MB, and a heap that grows is paid page by page). It returns
// the chunk (or the scratch buffer), the encoding and the finished copy.
func appendFinished(fin *cassettes.Finisher, chunk []byte, chunked bool, in *cassettes.Interaction) (next, data []byte, done cassettes.Interaction, err error) {
	need := 1 + 2*flatSize(in)
	switch {
	case !chunked:
		chunk = slices.Grow(chunk[:0], need)
	case cap(chunk)-len(chunk) < need:
		chunk = make([]byte, 0, max(encodeChunk, need))
	}
	done = *in
	fin.FinishInteraction(&done)
	start := len(chunk)
	out, err := appendInteraction(append(chunk, ','), &done)
	switch {
	case err != nil:
		return chunk, nil, done, err
	case !chunked:
		return out, bytes.Clone(out[start:]), done, nil
	}
	return out, out[start:len(out):len(out)], done, nil
}

// encoders are the finishers of the processors among which a save shares
// n interactions to encode: r.finish, and more (made once) when there are
// at least encodeShare a processor.
func (r *Recorder) encoders(n int) []*cassettes.Finisher {
	w := min(runtime.GOMAXPROCS(0), runtime.NumCPU(), n/encodeShare)
	for len(r.finishers) < w-1 {
		fin, err := cassettes.NewFinisher(&r.opts.Save)
		if err != nil {
			break // as r.finish was made: it cannot fail now
		}
		r.finishers = append(r.finishers, fin)
	}
	return append([]*cassettes.Finisher{r.finish}, r.finishers[:max(0, min(w-1, len(r.finishers)))]...)
}

// encodeShare is the fewest interactions worth a processor of their own.
const encodeShare = 2048

// maxArena is the most memory the arena keeps between saves.
const maxArena = 4 << 20
