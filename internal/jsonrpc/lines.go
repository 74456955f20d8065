package jsonrpc

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"time"

	"github.com/mcpmock/mcpmock/internal/grow"
)

// PumpOptions configure PumpLines. The zero value (or nil) is the default.
type PumpOptions struct {
	// Max is the longest line handed on, line end included; 0 means
	// DefaultMaxLine.
	Max int
	// TooLong, if set, is called for each line past Max, which is consumed
	// and not handed on; its error ends the pump. nil skips such lines.
	TooLong func(*LineTooLongError) error
	// Copy, if set, receives every byte read, unchanged, in the pieces in
	// which they are read, each as soon as it is read: a line longer than
	// the read buffer (64 KiB) goes on in pieces as they come, and a line
	// past Max and a blank line go on too. The line is handed to each
	// before its last piece is written, so that a recording sees a request
	// before the answer it causes. A write error ends the pump. This is the
	// stdio tap's byte-for-byte forwarding.
	Copy io.Writer

	// now and yield replace time.Now and runtime.Gosched in tests.
	now   func() time.Time
	yield func()
}

// yieldEvery is how often PumpLines lets the scheduler run.
const yieldEvery = 5 * time.Millisecond

// A yielder lets the scheduler run, every yieldEvery, on a goroutine that
// otherwise never gives up its processor: a stdio reader, which blocks in
// read(2) and, in the replay, answers inline. Without it, the runtime's
// monitor thread (sysmon) sees one goroutine on the processor for 10 ms,
// forces a preemption and hands the processor off (a thread woken for
// nothing), and its back-off starts again from 20 µs: it then wakes some
// 2,400 times a second. With it, `mcpmock replay` answering 8,000 calls
// makes about 150 sleeps instead of 2,400 and 420 futex calls instead of
// 1,100-1,400, and its CPU a call drops by a fifth (docs/performance.md).
// A yield on every line would wake a thread each time instead.
type yielder struct {
	last  time.Time
	now   func() time.Time
	yield func()
}

func newYielder(o *PumpOptions) *yielder {
	y := &yielder{now: o.now, yield: o.yield}
	if y.now == nil {
		y.now = time.Now
	}
	if y.yield == nil {
		y.yield = runtime.Gosched
	}
	y.last = y.now()
	return y
}

func (y *yielder) maybe() {
	if now := y.now(); now.Sub(y.last) >= yieldEvery {
		y.last = now
		y.yield()
	}
}

// PumpLines is the one loop of every stdio reader (the tap, the bridges,
// the upstream, the stdio front of replay): it reads newline-delimited
// messages from r, as the stdio transport frames them, and hands each line
// to each without its line end ("\n" or "\r\n"). Blank lines are skipped;
// a last line without a newline is handed on at the end of r. The slice is
// valid only during the call: each copies what it keeps. PumpLines returns
// nil at the end of r, else the first error of r, each, TooLong or Copy.
// Every 5 ms it lets the scheduler run (yielder).
func PumpLines(r io.Reader, each func(line []byte) error, opts *PumpOptions) error {
	var o PumpOptions
	if opts != nil {
		o = *opts
	}
	s := newLineScanner(r, o.Max)
	y := newYielder(&o)
	for {
		piece, line, n, err := s.step()
		switch {
		case line == nil && n > 0:
			if o.TooLong != nil {
				if terr := o.TooLong(&LineTooLongError{Len: n, Max: s.max}); terr != nil {
					return terr
				}
			}
		case line != nil:
			if line = bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(line)) > 0 {
				if eerr := each(line); eerr != nil {
					return eerr
				}
			}
		}
		if o.Copy != nil && len(piece) > 0 {
			if _, werr := o.Copy.Write(piece); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		y.maybe()
	}
}

// LineReader reads newline-delimited messages one at a time, as PumpLines
// hands them on, with no limit but Max (unlike bufio.Scanner's 64 KiB).
// PumpLines is the loop to use; LineReader is for a test that reads one
// line, then does something else.
type LineReader struct{ s *lineScanner }

// NewLineReader returns a reader of lines of at most max bytes; max <= 0
// means DefaultMaxLine.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{s: newLineScanner(r, max)}
}

// ReadLine returns the next line without its line ending ("\n" or "\r\n").
// Blank lines are skipped. A last line without a newline is returned before
// io.EOF. A line past the maximum is consumed and skipped, and ReadLine
// returns a *LineTooLongError; the reader can go on with the next line. The
// returned slice is valid until the next call.
func (lr *LineReader) ReadLine() ([]byte, error) {
	for {
		_, line, n, err := lr.s.step()
		switch {
		case line == nil && n > 0:
			return nil, &LineTooLongError{Len: n, Max: lr.s.max}
		case line != nil:
			if line = bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(line)) > 0 {
				return line, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// lineScanner splits a stream into lines of at most max bytes, reading it
// in pieces of at most its buffer's size.
type lineScanner struct {
	br    *bufio.Reader
	max   int
	long  []byte // the start of a line longer than br's buffer, up to max bytes
	inner bool   // a piece of a long line was read
	total int    // the bytes of the current line read so far
}

func newLineScanner(r io.Reader, max int) *lineScanner {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineScanner{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// step reads the next piece of the stream. When the piece ends a line (with
// a newline, or at an error), n is the line's length, line end included,
// and line is the line, or nil if it is longer than max. The piece and the
// line are valid until the next call. err is the error of the read, other
// than bufio.ErrBufferFull.
func (s *lineScanner) step() (piece, line []byte, n int, err error) {
	piece, err = s.br.ReadSlice('\n')
	full := err == bufio.ErrBufferFull
	if full {
		err = nil
	}
	if len(piece) == 0 {
		return nil, nil, 0, err
	}
	s.total += len(piece)
	if full || s.inner {
		if s.total <= s.max {
			// Doubling (grow.Slice): a line of n bytes is copied into at most
			// 2n bytes of new memory, where append's growth by a quarter
			// takes about 5n (50 MB for a batch of 10 MB).
			s.long = append(grow.Slice(s.long, len(piece)), piece...)
		}
		if full {
			s.inner = true
			return piece, nil, 0, nil
		}
		line = s.long
		s.long, s.inner = s.long[:0], false
	} else {
		line = piece
	}
	n, s.total = s.total, 0
	if n > s.max {
		line = nil
	}
	return piece, line, n, err
}
