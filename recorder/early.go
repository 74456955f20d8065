package recorder

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/mcpmock/mcpmock/cassettes"
)

// earlyEncoder encodes interactions as they complete, on a goroutine of
// its own, for the saves to come: a save uses an encoding only if the
// interaction did not change since (its fingerprint), and encodes the
// others itself.
//
// Encoded beside the builder rather than by it or by the save, the
// answers to a batch are encoded while the builder is still parsing the
// batch: the save that the durability promise waits for then mostly
// writes. A batch of 100,000 pings answered at once took the builder
// 0.24 s and the save that followed 0.25 s to encode them, one after the
// other; under the load of a go test ./... beside the tap, 0.8 s each.
//
// Its lock is taken last: the encoder never waits for another.
type earlyEncoder struct {
	*worker[earlyJob]
	seed   maphash.Seed
	finish *cassettes.Finisher // its own: a Finisher is not shared
	chunk  []byte              // where the next encoding goes
	infoAt int                 // the first interaction that named the server (-1: none yet)

	mu sync.Mutex
	// parts are the encodings by interaction index; floor is the first
	// index that may still be saved from memory: an encoding made for one
	// below (spilled meanwhile, encoded by the save) is dropped.
	parts map[int]part
	floor int
	// spilled is floor, for the encoder to skip what a save spilled
	// before it came to it, without taking mu.
	spilled atomic.Int64
}

// earlyJob is a completed interaction to encode: index i, and a copy of
// it. A copy of the struct is the interaction as it is now: the builder
// never changes a message once set; it replaces a response or an HTTP
// member whole, and appends to an exchange beyond the copy's length.
type earlyJob struct {
	i  int
	in cassettes.Interaction
}

func newEarlyEncoder(seed maphash.Seed, finish *cassettes.Finisher) *earlyEncoder {
	e := &earlyEncoder{seed: seed, finish: finish, parts: map[int]part{}, infoAt: -1}
	e.worker = newWorker(e.encodeAll)
	return e
}

// take returns the encodings of interactions from to end (exclusive) and
// forgets those below floor, which leave memory.
func (e *earlyEncoder) take(from, end, floor int) map[int]part {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.floor = max(e.floor, floor)
	e.spilled.Store(int64(e.floor))
	if len(e.parts) == 0 {
		return nil
	}
	// (The encodings held are of completed interactions: while many
	// requests are pending, far fewer than the indices from..end.)
	taken := make(map[int]part, min(len(e.parts), end-from))
	for i, p := range e.parts {
		if i < from || i >= end {
			continue
		}
		taken[i] = p
		if i < floor {
			delete(e.parts, i)
		}
	}
	return taken
}

// len is the number of encodings held.
func (e *earlyEncoder) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.parts)
}

// encodeAll encodes jobs and keeps their encodings.
func (e *earlyEncoder) encodeAll(jobs []earlyJob) {
	done := make([]part, len(jobs))
	for k := range jobs {
		// A save that came first has encoded and spilled it.
		if jobs[k].i >= int(e.spilled.Load()) {
			done[k] = e.encode(jobs[k].i, &jobs[k].in)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, p := range done {
		if i := jobs[k].i; p.data != nil && i >= e.floor {
			e.parts[i] = p
		}
	}
}

// encode finishes and encodes in; no data when it cannot be encoded (the
// save encodes it again and reports the error). Encodings go one after
// another into chunks, each left to the collector once the interactions
// in it are spilled.
func (e *earlyEncoder) encode(i int, in *cassettes.Interaction) part {
	fp := fingerprint(e.seed, in)
	chunk, data, done, err := appendFinished(e.finish, e.chunk, true, in)
	e.chunk = chunk
	if err != nil {
		return part{}
	}
	p := part{print: fp, data: data}
	// Only the first handshake's answer names the server: once one is
	// found, the interactions after it need not be looked at.
	if e.infoAt < 0 || i < e.infoAt {
		if p.info = cassettes.ServerInfoOf(&done); p.info != nil {
			e.infoAt = i
		}
	}
	return p
}
