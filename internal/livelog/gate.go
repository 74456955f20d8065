package livelog

import (
	"io"
	"sync"
)

// A Gate is the writer of the live log that can be held: while a person is
// asked a question on the terminal the log also writes to (the guard's
// "Allow this call? [y/N]"), the lines wait, and they are written, in order,
// once the question is answered, so that none lands on the prompt.
type Gate struct {
	w io.Writer

	mu   sync.Mutex // guards held and buf, and orders the writes
	held int        // questions open
	buf  []byte
}

// NewGate returns an open gate in front of w.
func NewGate(w io.Writer) *Gate { return &Gate{w: w} }

// Writer is the writer the gate is in front of.
func (g *Gate) Writer() io.Writer { return g.w }

// Write writes p, or keeps it while the gate is held.
func (g *Gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held > 0 {
		g.buf = append(g.buf, p...)
		return len(p), nil
	}
	return g.w.Write(p)
}

// Hold keeps the lines from now on, until as many Releases; the lines
// that wait to be written (TextHandler.Batched) go first.
func (g *Gate) Hold() {
	FlushAll()
	g.mu.Lock()
	g.held++
	g.mu.Unlock()
}

// Release writes what was kept once the last Hold is released.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held == 0 {
		return
	}
	g.held--
	if g.held == 0 && len(g.buf) > 0 {
		g.w.Write(g.buf)
		g.buf = nil
	}
}
