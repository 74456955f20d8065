package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Event is one block of a text/event-stream: the fields of the lines up to a
// blank line, as the Server-Sent Events specification parses them. A block
// of comments only (a keep-alive) or of an id only (a priming event of
// 2025-11-25) is an Event too, with no data.
type Event struct {
	// Type is the event field; "" means the default type, "message".
	Type string
	// Data is the data lines joined with "\n"; nil when the block had no
	// data line (a browser would dispatch no event), or when the data was
	// longer than the decoder's maximum (then TooLong is set).
	Data []byte
	// ID is the id field, when HasID is set (an empty id resets the last
	// event id).
	ID    string
	HasID bool
	// Retry is the retry field in milliseconds, when HasRetry is set.
	Retry    int
	HasRetry bool
	// Comments are the comment lines (after the colon, with one leading
	// space removed), in order.
	Comments []string
	// TooLong reports an event whose data was past the maximum; Size is
	// then the length of its data, which was not kept.
	TooLong bool
	Size    int
}

// HasData reports whether the event carries data: the events that a
// browser would dispatch.
func (e *Event) HasData() bool { return e.Data != nil || e.TooLong }

// DefaultMaxEvent is the default limit of the data of one SSE event: 64 MiB.
const DefaultMaxEvent = DefaultMaxLine

// SSEDecoder parses a text/event-stream pushed to it in chunks of any size,
// as they arrive: lines end with CRLF, LF or CR (also split across chunks),
// a leading byte order mark is skipped, and an event of more than the
// maximum is reported as TooLong without its data. The zero value is not
// usable: use NewSSEDecoder.
type SSEDecoder struct {
	max     int
	line    []byte // the current line so far
	lineLen int    // its length, also past what was kept
	afterCR bool   // the last byte was a CR: a following LF ends nothing
	started bool   // past the optional byte order mark
	bomN    int    // bytes of the byte order mark seen
	cur     Event
	any     bool // cur has a field or a comment
	data    []byte
	ndata   int // data lines in cur
}

// NewSSEDecoder returns a decoder whose events keep at most max bytes of
// data; max <= 0 means DefaultMaxEvent.
func NewSSEDecoder(max int) *SSEDecoder {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &SSEDecoder{max: max}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// Feed parses p and appends the events it completes to dst.
func (d *SSEDecoder) Feed(dst []Event, p []byte) []Event {
	for !d.started && len(p) > 0 {
		// The byte order mark may itself come in pieces.
		if p[0] == bom[d.bomN] {
			d.bomN++
			p = p[1:]
			d.started = d.bomN == len(bom)
			continue
		}
		d.started = true
		dst = d.Feed(dst, bom[:d.bomN])
	}
	for len(p) > 0 {
		if d.afterCR {
			d.afterCR = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			d.appendLine(p)
			return dst
		}
		d.appendLine(p[:i])
		d.afterCR = p[i] == '\r'
		p = p[i+1:]
		if ev, ok := d.endLine(); ok {
			dst = append(dst, ev)
		}
	}
	return dst
}

// Flush ends the stream: a last block without its blank line is returned
// (a browser would drop it; a tap still wants to see it).
func (d *SSEDecoder) Flush() (Event, bool) {
	if !d.started && d.bomN > 0 {
		d.started = true
		d.Feed(nil, bom[:d.bomN])
	}
	if d.lineLen > 0 {
		d.endLine()
	}
	return d.dispatch()
}

func (d *SSEDecoder) appendLine(p []byte) {
	d.lineLen += len(p)
	if room := d.max + 17 - len(d.line); room > 0 {
		// Keep a little past max: enough for the field name, its colon
		// and the optional space.
		d.line = append(d.line, p[:min(len(p), room)]...)
	}
}

// Over reports whether the event being read is already past the maximum,
// before its end: it will come out of Feed or Flush as TooLong. A relay
// that passes the stream on as it comes can stop there, rather than pass
// on an event of any size. (A comment line is cut at the maximum; it never
// makes an event too long.)
func (d *SSEDecoder) Over() bool {
	if d.cur.TooLong {
		return true
	}
	if len(d.line) == 0 || d.line[0] == ':' {
		return false
	}
	name, value, vlen := field(d.line, d.lineLen)
	if string(name) == "data" {
		return d.dataSize(vlen) > d.max
	}
	return fieldTooLong(name, value, vlen, d.max)
}

// field splits a line (the first bytes of a line of n bytes) into its
// field name and value, and gives the value's length, kept or not.
func field(line []byte, n int) (name, value []byte, vlen int) {
	name = line
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	return name, value, n - len(line) + len(value)
}

// fieldTooLong reports a field other than data past the maximum (its value
// may have been cut): the event is past the maximum, rather than carrying a
// truncated type or id. The limit does not count the optional space, so
// what the writer writes reads back the same.
func fieldTooLong(name, value []byte, vlen, max int) bool {
	return vlen > len(value) || vlen > max+16-len(name)-1
}

// dataSize is the size of the event's data with a data line of vlen bytes
// more.
func (d *SSEDecoder) dataSize(vlen int) int {
	size := d.cur.Size + vlen
	if d.ndata > 0 {
		size++
	}
	return size
}

// endLine processes the complete current line.
func (d *SSEDecoder) endLine() (Event, bool) {
	line, n := d.line, d.lineLen
	d.line, d.lineLen = d.line[:0], 0
	if n == 0 {
		return d.dispatch()
	}
	d.any = true
	if line[0] == ':' {
		d.cur.Comments = append(d.cur.Comments, strings.TrimPrefix(string(line[1:]), " "))
		return Event{}, false
	}
	name, value, vlen := field(line, n)
	if string(name) != "data" && fieldTooLong(name, value, vlen, d.max) {
		d.cur.TooLong, d.data = true, nil
		return Event{}, false
	}
	switch string(name) {
	case "data":
		size := d.dataSize(vlen)
		d.ndata++
		d.cur.Size = size
		if d.cur.TooLong || size > d.max || vlen > len(value) {
			d.cur.TooLong, d.data = true, nil
			return Event{}, false
		}
		if d.ndata > 1 {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
	case "event":
		d.cur.Type = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.cur.ID, d.cur.HasID = string(value), true
		}
	case "retry":
		if r, err := strconv.Atoi(string(value)); err == nil && r >= 0 && isDigits(value) {
			d.cur.Retry, d.cur.HasRetry = r, true
		}
	}
	return Event{}, false
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// dispatch ends the current block.
func (d *SSEDecoder) dispatch() (Event, bool) {
	if !d.any {
		return Event{}, false
	}
	ev := d.cur
	if d.ndata > 0 && !ev.TooLong {
		ev.Data = append([]byte{}, d.data...)
		ev.Size = len(ev.Data)
	}
	d.cur, d.any, d.ndata, d.data = Event{}, false, 0, d.data[:0]
	return ev, true
}

// SSEReader reads events from a text/event-stream.
type SSEReader struct {
	r       io.Reader
	d       *SSEDecoder
	pending []Event
	buf     []byte
	err     error
}

// NewSSEReader returns a reader of the events of r, keeping at most max
// bytes of data per event (max <= 0 means DefaultMaxEvent).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	return &SSEReader{r: r, d: NewSSEDecoder(max), buf: make([]byte, 32<<10)}
}

// Next returns the next event as soon as its blank line has been read. At
// the end of the stream it returns a last unterminated block, if any, then
// the read error (io.EOF at a clean end).
func (s *SSEReader) Next() (Event, error) {
	for {
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.err != nil {
			return Event{}, s.err
		}
		n, err := s.r.Read(s.buf)
		s.pending = s.d.Feed(s.pending[:0], s.buf[:n])
		if err != nil {
			s.err = err
			if ev, ok := s.d.Flush(); ok {
				s.pending = append(s.pending, ev)
			}
		}
	}
}

// ErrSSEField is returned by writeEvent and CheckEventID for a field that
// cannot be written (a line break in the type or id, a NUL in the id).
var ErrSSEField = errors.New("jsonrpc: SSE field holds a line break or NUL")

// AppendEvent appends the wire form of ev to b: its comments, then event,
// id, retry and data lines (data split at its line breaks), then the blank
// line.
func AppendEvent(b []byte, ev Event) []byte {
	for _, c := range ev.Comments {
		for _, l := range splitLines(c) {
			b = append(b, ':')
			if l != "" {
				b = append(b, ' ')
			}
			b = append(b, l...)
			b = append(b, '\n')
		}
	}
	if ev.Type != "" {
		b = append(append(append(b, "event: "...), ev.Type...), '\n')
	}
	if ev.HasID {
		b = append(append(append(b, "id: "...), ev.ID...), '\n')
	}
	if ev.HasRetry {
		b = strconv.AppendInt(append(b, "retry: "...), int64(ev.Retry), 10)
		b = append(b, '\n')
	}
	if ev.Data != nil {
		for _, l := range splitLines(string(ev.Data)) {
			b = append(append(append(b, "data: "...), l...), '\n')
		}
	}
	return append(b, '\n')
}

// CheckEventID reports an SSE event id that cannot be written: a line break
// (CR or LF) would end the id line, and what follows would be read as more
// fields or another event; a NUL makes a client ignore the id (the SSE
// specification's rule). The error wraps ErrSSEField.
func CheckEventID(id string) error {
	if i := strings.IndexAny(id, "\r\n\x00"); i >= 0 {
		what := "a line break"
		if id[i] == 0 {
			what = "a NUL"
		}
		return fmt.Errorf("%w: the SSE event id %q holds %s at byte %d", ErrSSEField, id, what, i)
	}
	return nil
}

// writeEvent writes ev to w in one Write. It refuses a type or id that would
// break the framing.
func writeEvent(w io.Writer, ev Event) error {
	if strings.ContainsAny(ev.Type, "\r\n") {
		return ErrSSEField
	}
	if err := CheckEventID(ev.ID); err != nil {
		return err
	}
	_, err := w.Write(AppendEvent(nil, ev))
	return err
}

// splitLines splits s at CRLF, LF and CR.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}
