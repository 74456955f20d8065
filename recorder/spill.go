package recorder

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
)

// spill keeps the interactions of a recording that can no longer change,
// finished and encoded as they appear in the cassette (each after its
// comma), in a file next to the cassette instead of in memory. Each save
// copies it into the new cassette file (in the kernel, with
// copy_file_range, where the system has it) between the head and the
// interactions still in memory, so the tap's memory stays flat however
// long it records, and no interaction is encoded twice once spilled.
//
// The file is removed as soon as it is created: it lives as long as the
// recorder holds it open, and a tap killed with SIGKILL leaves nothing but
// the cassette behind.
type spill struct {
	f *os.File
	// size is the spill's length; n the number of interactions in it
	// (interactions 0 to n-1).
	size int64
	n    int
	buf  []byte // gathers the writes of add
	// removed says the file was unlinked when it was created (not where
	// the system refuses to remove an open file); close removes it then.
	removed bool
}

func newSpill(path string) (*spill, error) {
	f, err := cassettefile.CreateTemp(path, "spill")
	if err != nil {
		return nil, err
	}
	s := &spill{f: f}
	s.removed = os.Remove(f.Name()) == nil
	return s, nil
}

// add appends the encodings of the next interactions (each after its
// comma), gathered into writes of up to spillChunk bytes; on an error none
// of them is in the spill, and the next add writes over whatever part of
// them got there.
func (s *spill) add(parts [][]byte) error {
	if s.buf == nil {
		s.buf = make([]byte, 0, spillChunk)
	}
	at := s.size
	flush := func() error {
		if len(s.buf) == 0 {
			return nil
		}
		_, err := s.f.WriteAt(s.buf, at)
		at += int64(len(s.buf))
		s.buf = s.buf[:0]
		return err
	}
	for _, p := range parts {
		if len(s.buf)+len(p) > cap(s.buf) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(p) > cap(s.buf) {
			if _, err := s.f.WriteAt(p, at); err != nil {
				return err
			}
			at += int64(len(p))
			continue
		}
		s.buf = append(s.buf, p...)
	}
	if err := flush(); err != nil {
		return err
	}
	s.size = at
	s.n += len(parts)
	return nil
}

// spillChunk is the size of the spill's write buffer.
const spillChunk = 64 << 10

// writeFile writes a cassette file: head (which ends with the bracket that
// opens "interactions"), the spilled interactions, the parts that follow
// them (each after its comma), and end (which starts with the closing
// bracket).
func (s *spill) writeFile(w io.Writer, head []byte, parts [][]byte, end []byte) error {
	if s.n == 0 && len(parts) == 0 {
		_, err := w.Write(emptyFile(head, end))
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	first := true
	if s.n > 0 {
		// Copied from file to file: bw is flushed first, and w is the
		// temporary file itself unless a forbidWriter checks what goes.
		if err := bw.Flush(); err != nil {
			return err
		}
		if _, err := s.f.Seek(1, io.SeekStart); err != nil { // after the first comma
			return err
		}
		if _, err := io.CopyN(w, s.f, s.size-1); err != nil {
			return err
		}
		first = false
	}
	for _, p := range parts {
		if first {
			p, first = p[1:], false
		}
		bw.Write(p)
	}
	bw.Write(end)
	return bw.Flush()
}

// load decodes the spilled interactions and those encoded in more (each
// after its comma); after close, from the cassette file at path, which
// begins with them.
func (s *spill) load(path string, more [][]byte) ([]cassettes.Interaction, error) {
	if s.f == nil {
		c, err := cassettes.Load(path)
		if err != nil {
			return nil, err
		}
		n := s.n + len(more)
		if len(c.Interactions) < n {
			return nil, fmt.Errorf("recorder: %s holds %d interactions, %d were spilled", path, len(c.Interactions), n)
		}
		return c.Interactions[:n], nil
	}
	data := make([]byte, s.size)
	if _, err := s.f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("recorder: read the spill file: %w", err)
	}
	data = slices.Concat(append([][]byte{data}, more...)...)
	if len(data) == 0 {
		return nil, nil
	}
	doc := append([]byte(`{"version":1,"meta":{},"interactions":[`), data[1:]...)
	doc = append(doc, "]}"...)
	c, err := cassettes.Parse("spill", doc)
	if err != nil {
		return nil, fmt.Errorf("recorder: read the spill file: %w", err)
	}
	return c.Interactions, nil
}

func (s *spill) close() {
	if s == nil || s.f == nil {
		return
	}
	s.f.Close()
	if !s.removed {
		os.Remove(s.f.Name())
	}
	s.f = nil
}
