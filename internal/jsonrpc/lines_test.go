package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPumpLines(t *testing.T) {
	big := strings.Repeat("b", 100<<10) // past the 64 KiB read buffer
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		tooLong []int
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 0, []string{`{"a":1}`, `{"b":2}`}, nil},
		{"CRLF", "one\r\ntwo\r\n", 0, []string{"one", "two"}, nil},
		{"blank lines skipped", "\n  \n\r\none\n\n", 0, []string{"one"}, nil},
		{"last line without newline", "one\ntwo", 0, []string{"one", "two"}, nil},
		{"a line past the read buffer", big + "\nnext\n", 0, []string{big, "next"}, nil},
		{"a line past max", "short\n" + strings.Repeat("z", 3000) + "\nnext\n", 1000, []string{"short", "next"}, []int{3001}},
		{"a long line past max", big + "\nnext", 1000, []string{"next"}, []int{len(big) + 1}},
		{"a last line past max", "x\n" + big, 1000, []string{"x"}, []int{len(big)}},
		{"empty", "", 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var tooLong []int
			var copied bytes.Buffer
			err := PumpLines(iotest.HalfReader(strings.NewReader(tt.in)), func(line []byte) error {
				got = append(got, string(line))
				return nil
			}, &PumpOptions{Max: tt.max, Copy: &copied, TooLong: func(e *LineTooLongError) error {
				if e.Max != tt.max {
					t.Errorf("LineTooLongError.Max = %d, want %d", e.Max, tt.max)
				}
				tooLong = append(tooLong, e.Len)
				return nil
			}})
			if err != nil {
				t.Fatalf("PumpLines: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%.500s", diff)
			}
			if diff := cmp.Diff(tt.tooLong, tooLong); diff != "" {
				t.Errorf("too long (-want +got):\n%s", diff)
			}
			if copied.String() != tt.in {
				t.Errorf("Copy got %d bytes that differ from the %d read", copied.Len(), len(tt.in))
			}
			// LineReader hands on the same lines.
			lr := NewLineReader(strings.NewReader(tt.in), tt.max)
			var pulled []string
			for {
				line, err := lr.ReadLine()
				if errors.Is(err, ErrLineTooLong) {
					continue
				}
				if err != nil {
					break
				}
				pulled = append(pulled, string(line))
			}
			if diff := cmp.Diff(tt.want, pulled); diff != "" {
				t.Errorf("LineReader lines (-want +got):\n%.500s", diff)
			}
		})
	}
}

// orderLog records the calls of each and the writes to Copy.
type orderLog struct{ events []string }

func (l *orderLog) Write(p []byte) (int, error) {
	l.events = append(l.events, fmt.Sprintf("write %d", len(p)))
	return len(p), nil
}

// TestPumpLinesOrder: a line is handed on before its last piece is
// written, and the pieces of a long line are written as they come.
func TestPumpLinesOrder(t *testing.T) {
	big := strings.Repeat("b", 70<<10)
	log := &orderLog{}
	PumpLines(strings.NewReader("one\n"+big+"\n"), func(line []byte) error {
		log.events = append(log.events, fmt.Sprintf("line %d", len(line)))
		return nil
	}, &PumpOptions{Copy: log})
	want := []string{"line 3", "write 4", fmt.Sprintf("write %d", 64<<10), fmt.Sprintf("line %d", len(big)), fmt.Sprintf("write %d", len(big)+1-64<<10)}
	if diff := cmp.Diff(want, log.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestPumpLinesErrors(t *testing.T) {
	stop := errors.New("stop")
	tests := []struct {
		name string
		r    io.Reader
		o    *PumpOptions
		each func([]byte) error
		want error
	}{
		{"each stops", strings.NewReader("a\nb\n"), nil, func([]byte) error { return stop }, stop},
		{"TooLong stops", strings.NewReader(strings.Repeat("z", 50) + "\n"), &PumpOptions{Max: 10, TooLong: func(*LineTooLongError) error { return stop }}, func([]byte) error { return nil }, stop},
		{"Copy stops", strings.NewReader("a\n"), &PumpOptions{Copy: errWriter{stop}}, func([]byte) error { return nil }, stop},
		{"the reader's error", iotest.ErrReader(stop), nil, func([]byte) error { return nil }, stop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := PumpLines(tt.r, tt.each, tt.o); !errors.Is(err, tt.want) {
				t.Errorf("PumpLines() = %v, want %v", err, tt.want)
			}
		})
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// BenchmarkPumpLines is the tap's pump (Copy set) per line at three
// stream lengths: the cost per line stays flat.
func BenchmarkPumpLines(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}` + "\n")
	for _, n := range []int{1_000, 10_000, 100_000} {
		stream := bytes.Repeat(line, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				PumpLines(bytes.NewReader(stream), func([]byte) error { return nil }, &PumpOptions{Copy: io.Discard})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/item")
		})
	}
}

// TestPumpLinesYields: a stdio reader, which would otherwise never leave
// its processor, lets the scheduler run once every yieldEvery (5 ms) of its
// clock, and not more often: here the clock moves 1 ms each time it is read,
// once a line.
func TestPumpLinesYields(t *testing.T) {
	start := time.Unix(0, 0)
	ms := 0
	yields := 0
	o := &PumpOptions{
		now:   func() time.Time { ms++; return start.Add(time.Duration(ms) * time.Millisecond) },
		yield: func() { yields++ },
	}
	lines := 0
	err := PumpLines(strings.NewReader(strings.Repeat("{}\n", 20)), func([]byte) error { lines++; return nil }, o)
	if err != nil || lines != 20 {
		t.Fatalf("PumpLines: %v, %d lines, want 20", err, lines)
	}
	// The clock reads 1 ms when the pump starts and 1+k ms after line k:
	// it yields after lines 5, 10, 15 and 20.
	if yields != 4 {
		t.Errorf("the reader yielded %d times over 21 ms of its clock, want 4 (once every %v)", yields, yieldEvery)
	}
}

// TestPumpLinesLongLineMemory: a line longer than the read buffer is
// gathered in memory that doubles, so a line of n bytes costs at most 2n
// bytes of new memory (append's growth by a quarter took about 5n: 50 MB
// for a client's batch of 10 MB, page faults and all).
func TestPumpLinesLongLineMemory(t *testing.T) {
	const size = 8 << 20
	in := bytes.Repeat([]byte("x"), size)
	in[size-1] = '\n'
	var before, after runtime.MemStats
	got := 0
	runtime.ReadMemStats(&before)
	err := PumpLines(bytes.NewReader(in), func(line []byte) error {
		got = len(line)
		return nil
	}, nil)
	runtime.ReadMemStats(&after)
	if err != nil || got != size-1 {
		t.Fatalf("PumpLines: line of %d bytes, %v; want %d bytes", got, err, size-1)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*size/2 {
		t.Errorf("a line of %d bytes allocated %d bytes (%.1f×), want at most 2.5×", size, alloc, float64(alloc)/size)
	}
}
