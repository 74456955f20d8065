package cassettes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"sync"
	"unsafe"
)

// incrementalEncoder encodes a growing cassette again and again, as the
// recorder does while recording, re-encoding only the interactions that
// changed since the last call. Its output is byte for byte that of Encode.
// The zero value is ready to use; it is safe for concurrent use.
type incrementalEncoder struct {
	mu     sync.Mutex // guards the fields below
	seed   maphash.Seed
	seeded bool
	parts  [][]byte // the encoding of each interaction
	prints []uint64 // the fingerprint each part was encoded from
}

// Encode returns the cassette as Encode does.
func (e *incrementalEncoder) Encode(c *Cassette) ([]byte, error) {
	var buf bytes.Buffer
	if err := e.Write(&buf, c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes the cassette to w as Encode encodes it, without building the
// whole file in memory.
func (e *incrementalEncoder) Write(w io.Writer, c *Cassette) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.seeded {
		e.seed, e.seeded = maphash.MakeSeed(), true
	}
	head, tail, err := EncodeHead(c)
	if err != nil {
		return err
	}
	if len(c.Interactions) == 0 {
		_, err := w.Write(EmptyFile(head, tail))
		return err
	}
	if len(e.parts) > len(c.Interactions) {
		e.parts, e.prints = e.parts[:len(c.Interactions)], e.prints[:len(c.Interactions)]
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		fp := Fingerprint(e.seed, in)
		if i < len(e.parts) && e.prints[i] == fp {
			continue
		}
		part, err := AppendInteraction(nil, in)
		if err != nil {
			return fmt.Errorf("encode cassette: interaction %d: %w", i+1, err)
		}
		if i < len(e.parts) {
			e.parts[i], e.prints[i] = part, fp
		} else {
			e.parts, e.prints = append(e.parts, part), append(e.prints, fp)
		}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(head)
	for i, p := range e.parts {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.Write(p)
	}
	bw.Write(tail)
	return bw.Flush()
}

// EncodeHead returns what Encode writes around the interactions of a
// cassette that has some: head ends with the opening bracket of
// "interactions", tail starts with its closing bracket. The file is head,
// then each interaction as AppendInteraction encodes it, separated by ",",
// then tail (EmptyFile for none).
func EncodeHead(c *Cassette) (head, tail []byte, err error) {
	h := *c
	h.Interactions = []Interaction{}
	hb, err := Encode(&h)
	if err != nil {
		return nil, nil, err
	}
	// hb ends with `"interactions": []` and the closing brace.
	cut := bytes.LastIndex(hb, []byte("[]"))
	if cut < 0 {
		return nil, nil, fmt.Errorf("encode cassette: unexpected header %q", hb)
	}
	head = append(hb[:cut:cut], '[')
	tail = append([]byte("\n  ]"), hb[cut+2:]...)
	return head, tail, nil
}

// EmptyFile is the file of a cassette without interactions, from the head
// and tail of EncodeHead.
func EmptyFile(head, tail []byte) []byte {
	out := append(bytes.Clone(head), ']')
	return append(out, tail[len("\n  ]"):]...)
}

// AppendInteraction appends one interaction as Encode writes it inside the
// "interactions" array: a line break, the indentation, the interaction over
// as many lines as it takes, and no separator.
//
// A recorded interaction (no HTTP details, no script) is written directly,
// its messages indented in one pass without a reflection or a scanner; its
// bytes are those of encoding/json, which writes the others.
func AppendInteraction(dst []byte, in *Interaction) ([]byte, error) {
	if in.HTTP != nil || in.When != nil || in.Fault != nil {
		return appendInteractionJSON(dst, in)
	}
	size := 128 + len(in.Request) + len(in.Notification) + len(in.Match)
	for i := range in.Exchange {
		size += 96 + len(in.Exchange[i].Message)
	}
	if in.Response != nil {
		size += 96 + len(in.Response.Message)
	}
	buf := flatBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxFlatBuf {
			flatBufs.Put(buf)
		}
	}()
	flat, err := appendFlat(slices.Grow((*buf)[:0], size), in)
	*buf = flat[:0]
	if err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, 2*len(flat))
	dst = append(dst, "\n    "...)
	return appendIndented(dst, flat, "    ", "  ")
}

// flatBufs hold the one-line forms that AppendInteraction indents, so that
// encoding an interaction into a buffer with room allocates nothing; a
// buffer larger than maxFlatBuf is left to the collector.
var flatBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxFlatBuf = 64 << 10

func appendInteractionJSON(dst []byte, in *Interaction) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	buf.WriteString("\n    ")
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(in); err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendFlat appends the interaction as JSON on one line, its messages as
// they are (appendIndented drops their white space).
func appendFlat(dst []byte, in *Interaction) ([]byte, error) {
	dst = append(dst, `{"from":`...)
	dst = appendString(dst, string(in.From))
	dst = append(dst, `,"atMs":`...)
	dst = appendMillis(dst, in.AtMs)
	dst = appendRaw(dst, `,"request":`, in.Request)
	dst = appendRaw(dst, `,"notification":`, in.Notification)
	if in.Raw != nil {
		dst = append(dst, `,"raw":`...)
		dst = appendString(dst, *in.Raw)
	}
	if in.Batch != 0 {
		dst = strconv.AppendInt(append(dst, `,"batch":`...), int64(in.Batch), 10)
	}
	if in.BeforeResponse {
		dst = append(dst, `,"beforeResponse":true`...)
	}
	if in.AfterExchange != 0 {
		dst = strconv.AppendInt(append(dst, `,"afterExchange":`...), int64(in.AfterExchange), 10)
	}
	if len(in.Exchange) > 0 {
		dst = append(dst, `,"exchange":[`...)
		for i := range in.Exchange {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendFlatMessage(dst, &in.Exchange[i])
		}
		dst = append(dst, ']')
	}
	if in.Response != nil {
		dst = appendFlatMessage(append(dst, `,"response":`...), in.Response)
	}
	dst = appendRaw(dst, `,"match":`, in.Match)
	if in.Times != 0 {
		dst = strconv.AppendInt(append(dst, `,"times":`...), int64(in.Times), 10)
	}
	return append(dst, '}'), nil
}

func appendFlatMessage(dst []byte, m *Message) []byte {
	dst = append(dst, `{"from":`...)
	dst = appendString(dst, string(m.From))
	dst = append(dst, `,"atMs":`...)
	dst = appendMillis(dst, m.AtMs)
	dst = appendRaw(dst, `,"message":`, m.Message)
	if m.Raw != nil {
		dst = append(dst, `,"raw":`...)
		dst = appendString(dst, *m.Raw)
	}
	if m.Batch != 0 {
		dst = strconv.AppendInt(append(dst, `,"batch":`...), int64(m.Batch), 10)
	}
	return append(dst, '}')
}

// appendRaw appends a member whose value is JSON text, omitted when empty.
func appendRaw(dst []byte, member string, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return dst
	}
	return append(append(dst, member...), raw...)
}

func appendMillis(dst []byte, m Millis) []byte {
	return m.appendJSON(dst)
}

// appendString appends s as encoding/json writes it without HTML escaping
// (quote): printable ASCII as it is, without calling it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return append(dst, quote(s)...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendIndented appends the valid JSON text src indented as
// json.Indent(dst, src, prefix, indent) does, white space outside strings
// dropped (as json.Compact would first).
func appendIndented(dst, src []byte, prefix, indent string) ([]byte, error) {
	depth := 0
	open := false // after '{' or '[': the line break waits, an empty one closes at once
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			end := i + 1
			for {
				q := bytes.IndexByte(src[end:], '"')
				if q < 0 {
					return dst, errors.New("encode cassette: unterminated string")
				}
				end += q
				k := end
				for src[k-1] == '\\' {
					k--
				}
				end++
				if (end-1-k)%2 == 0 {
					break
				}
			}
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	if depth != 0 || open {
		return dst, errors.New("encode cassette: unbalanced JSON")
	}
	return dst, nil
}

// Fingerprint summarises what can change in an interaction while it is
// recorded: which messages it holds (by identity and length: a recorded
// message's bytes never change once set) and its HTTP details. Two calls
// with the same seed give the same value for an interaction that did not
// change.
func Fingerprint(seed maphash.Seed, in *Interaction) uint64 {
	e := incrementalEncoder{seed: seed}
	return e.fingerprint(in)
}

// fingerprint summarises what can change in an interaction while it is
// recorded: which messages it holds (by identity and length: a recorded
// message's bytes never change once set) and its HTTP details.
func (e *incrementalEncoder) fingerprint(in *Interaction) uint64 {
	var h maphash.Hash
	h.SetSeed(e.seed)
	w := func(vs ...uint64) {
		for _, v := range vs {
			var b [8]byte
			for i := range b {
				b[i] = byte(v >> (8 * i))
			}
			h.Write(b[:])
		}
	}
	raw := func(b []byte) {
		if len(b) == 0 {
			w(0, 0)
			return
		}
		w(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint64(len(b)))
	}
	str := func(s string) { h.WriteString(s); w(uint64(len(s))) }
	str(string(in.From))
	w(uint64(int64(float64(in.AtMs) * 1000)))
	raw(in.Request)
	raw(in.Notification)
	raw(in.Match)
	if in.Raw != nil {
		str(*in.Raw)
	}
	before := uint64(0)
	if in.BeforeResponse {
		before = 1
	}
	w(uint64(in.Batch), uint64(in.Times), before, uint64(in.AfterExchange), uint64(len(in.Exchange)))
	msg := func(m *Message) {
		if m == nil {
			w(1)
			return
		}
		str(string(m.From))
		w(uint64(int64(float64(m.AtMs) * 1000)))
		raw(m.Message)
		if m.Raw != nil {
			str(*m.Raw)
		}
	}
	for i := range in.Exchange {
		msg(&in.Exchange[i])
	}
	msg(in.Response)
	if in.HTTP != nil {
		hp := in.HTTP
		w(uint64(hp.Status), uint64(len(hp.EventIDs)), uint64(len(hp.RequestHeaders)), uint64(len(hp.ResponseHeaders)))
		str(hp.URL)
		str(hp.Form)
		str(hp.Stream)
		str(hp.Body)
		for _, id := range hp.EventIDs {
			str(id)
		}
		for _, m := range []map[string]string{hp.RequestHeaders, hp.ResponseHeaders} {
			for k, v := range m {
				// Order-independent: add the pair's hash.
				var ph maphash.Hash
				ph.SetSeed(e.seed)
				ph.WriteString(k)
				ph.WriteString(v)
				w(ph.Sum64())
			}
		}
	}
	w(uint64(uintptr(unsafe.Pointer(in.When))), uint64(uintptr(unsafe.Pointer(in.Fault))))
	return h.Sum64()
}
