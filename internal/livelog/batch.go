package livelog

import (
	"io"
	"sync"
	"time"
)

// lineDelay is how long a batched line waits for others (TextHandler.Batched);
// a variable for the tests. Each write of a batch wakes whoever reads
// stderr, and mcpmock's threads are switched out more often for it: with
// 10 ms, a replay's threads were switched 1.17 times a call against 1.09 with
// --quiet, and 1.10 with 50 ms, below what a person watching the log
// can tell.
var lineDelay = 50 * time.Millisecond

// maxWaiting is how many bytes of lines wait at most: more are written.
const maxWaiting = 64 << 10

// textOut is where a TextHandler and its copies write.
type textOut struct {
	mu      sync.Mutex // guards what follows, and orders the lines
	w       io.Writer
	waiting []byte      // lines not written yet
	armed   bool        // timer will write them
	timer   *time.Timer // of flush
}

// addLine adds "mcpmock: " and the line, in colour when color is not "",
// to what o writes: at once with what waits, or, when wait, after at most
// lineDelay.
func addLine[T string | []byte](o *textOut, color string, line T, wait bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waiting = append(o.waiting, color...)
	o.waiting = append(o.waiting, "mcpmock: "...)
	o.waiting = append(o.waiting, line...)
	if color != "" {
		o.waiting = append(o.waiting, "\x1b[0m"...)
	}
	return o.endLineLocked(wait)
}

// endLineLocked ends the line that o.waiting ends with and writes what
// waits, at once or, when wait, after at most lineDelay.
func (o *textOut) endLineLocked(wait bool) error {
	o.waiting = append(o.waiting, '\n')
	if !wait || len(o.waiting) >= maxWaiting {
		return o.writeLocked()
	}
	if !o.armed {
		o.armed = true
		outs.add(o)
		if o.timer == nil {
			o.timer = time.AfterFunc(lineDelay, o.flush)
		} else {
			o.timer.Reset(lineDelay)
		}
	}
	return nil
}

// writeLocked writes what waits, in one write.
func (o *textOut) writeLocked() error {
	if o.armed {
		o.armed = false
		o.timer.Stop()
		outs.remove(o)
	}
	if len(o.waiting) == 0 {
		return nil
	}
	_, err := o.w.Write(o.waiting)
	o.waiting = o.waiting[:0]
	if cap(o.waiting) > 4*maxWaiting { // a batch past maxWaiting grows its buffer beyond it: kept
		o.waiting = nil
	}
	return err
}

func (o *textOut) flush() {
	o.mu.Lock()
	o.writeLocked()
	o.mu.Unlock()
}

// outs are the textOuts whose lines wait.
var outs waitingOuts

type waitingOuts struct {
	mu  sync.Mutex
	set map[*textOut]bool
}

func (w *waitingOuts) add(o *textOut) {
	w.mu.Lock()
	if w.set == nil {
		w.set = map[*textOut]bool{}
	}
	w.set[o] = true
	w.mu.Unlock()
}

func (w *waitingOuts) remove(o *textOut) {
	w.mu.Lock()
	delete(w.set, o)
	w.mu.Unlock()
}

// FlushAll writes every line that waits in the process (TextHandler.Batched),
// before what is written next: a command calls it before it exits.
func FlushAll() {
	outs.mu.Lock()
	if len(outs.set) == 0 {
		outs.mu.Unlock()
		return
	}
	waiting := make([]*textOut, 0, len(outs.set))
	for o := range outs.set {
		waiting = append(waiting, o)
	}
	outs.mu.Unlock()
	for _, o := range waiting {
		o.flush()
	}
}
