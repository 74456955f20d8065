package recorder

import (
	"cmp"
	"fmt"
	"io"
	"slices"
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
		fp := fingerprint(r.seed, in)
		fin := *in
		r.earlyFinish.FinishInteraction(&fin)
		// Encodings go one after another into chunks of memory, each
		// left to the collector once the interactions in it are spilled.
		// The room appendInteraction asks for: with less, it would grow
		// (copy) the whole chunk.
		if need := 1 + 2*flatSize(&fin); cap(r.chunk)-len(r.chunk) < need {
			r.chunk = make([]byte, 0, max(encodeChunk, need))
		}
		start := len(r.chunk)
		out, err := appendInteraction(append(r.chunk, ','), &fin)
		if err != nil {
			continue // the save encodes it again and reports the error
		}
		r.chunk = out
		r.early[i] = part{print: fp, data: out[start:len(out):len(out)], info: cassettes.ServerInfoOf(&fin)}
	}
}

// maxEarly bounds the interactions encodeEarly looks at in one batch.
const maxEarly = 4096

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
	// into the arena's chunks (encodeChunk), the last reused from save to
	// save once they are spilled, unless an encoding of them is at hand (encoded). An interaction that
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
		if p, ok := r.encoded(i, fingerprint(r.seed, &gone[k]), early); ok {
			data, info = p.data, p.info
		} else {
			if need := 1 + 2*flatSize(&gone[k]); cap(r.arena)-len(r.arena) < need {
				r.arena = make([]byte, 0, max(encodeChunk, need))
			}
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

// encode returns the finished encoding of interaction i, from the last
// save's or the builder's early one when the interaction did not change
// since.
func (r *Recorder) encode(i int, in *cassettes.Interaction, early map[int]part) (part, error) {
	fp := fingerprint(r.seed, in)
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
	out, err := appendInteraction(dst, &fin)
	if err != nil {
		return dst, nil, fmt.Errorf("encode cassette: interaction %d: %w", i+1, err)
	}
	return out, cassettes.ServerInfoOf(&fin), nil
}

// maxArena is the most memory the arena keeps between saves.
const maxArena = 4 << 20
