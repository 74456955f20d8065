package recorder

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
)

// encodeHead returns what cassettes.Encode writes around the interactions of a
// cassette that has some: head ends with the opening bracket of
// "interactions", tail starts with its closing bracket. The file is head,
// then each interaction as appendInteraction encodes it, separated by ",",
// then tail (emptyFile for none).
func encodeHead(c *cassettes.Cassette) (head, tail []byte, err error) {
	h := *c
	h.Interactions = []cassettes.Interaction{}
	hb, err := cassettes.Encode(&h)
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

// emptyFile is the file of a cassette without interactions, from the head
// and tail of encodeHead.
func emptyFile(head, tail []byte) []byte {
	out := append(bytes.Clone(head), ']')
	return append(out, tail[len("\n  ]"):]...)
}

// appendInteraction appends one interaction as cassettes.Encode writes it inside the
// "interactions" array: a line break, the indentation, the interaction over
// as many lines as it takes, and no separator.
//
// A recorded interaction (over stdio or HTTP: no script) is written
// directly, its messages indented in one pass without a reflection or a
// scanner; its bytes are those of encoding/json, which writes the others.
func appendInteraction(dst []byte, in *cassettes.Interaction) ([]byte, error) {
	if in.When != nil || in.Fault != nil {
		return appendInteractionJSON(dst, in)
	}
	size := flatSize(in)
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

// flatSize is a bound of the one-line form of a recorded interaction
// (appendFlat); appendInteraction needs twice as much room in dst, for the
// indented form.
func flatSize(in *cassettes.Interaction) int {
	size := 128 + len(in.Request) + len(in.Notification) + len(in.Match)
	for i := range in.Exchange {
		size += 96 + len(in.Exchange[i].Message)
	}
	if in.Response != nil {
		size += 96 + len(in.Response.Message)
	}
	if h := in.HTTP; h != nil {
		size += 128 + len(h.URL) + len(h.Form) + len(h.Stream) + len(h.Body)
		for _, id := range h.EventIDs {
			size += 4 + len(id)
		}
		for _, m := range [...]map[string]string{h.RequestHeaders, h.ResponseHeaders} {
			for k, v := range m {
				size += 6 + len(k) + len(v)
			}
		}
	}
	return size
}

// flatBufs hold the one-line forms that appendInteraction indents, so that
// encoding an interaction into a buffer with room allocates nothing; a
// buffer larger than maxFlatBuf is left to the collector.
var flatBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxFlatBuf = 64 << 10

func appendInteractionJSON(dst []byte, in *cassettes.Interaction) ([]byte, error) {
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
func appendFlat(dst []byte, in *cassettes.Interaction) ([]byte, error) {
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
	if in.HTTP != nil {
		dst = appendFlatHTTP(append(dst, `,"http":`...), in.HTTP)
	}
	return append(dst, '}'), nil
}

// appendFlatHTTP appends an interaction's HTTP details as encoding/json
// writes them: the members that are set, in the struct's order, the
// headers by name.
func appendFlatHTTP(dst []byte, h *cassettes.HTTP) []byte {
	sep := "{"
	str := func(member, v string) {
		if v != "" {
			dst = appendString(append(append(dst, sep...), member...), v)
			sep = ","
		}
	}
	headers := func(member string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		dst = append(append(dst, sep...), member...)
		sep = ","
		var few [8]string
		names := few[:0]
		for k := range m {
			names = append(names, k)
		}
		slices.Sort(names)
		for i, k := range names {
			if i == 0 {
				dst = append(dst, '{')
			} else {
				dst = append(dst, ',')
			}
			dst = appendString(append(appendString(dst, k), ':'), m[k])
		}
		dst = append(dst, '}')
	}
	str(`"url":`, h.URL)
	if h.Status != 0 {
		dst = strconv.AppendInt(append(append(dst, sep...), `"status":`...), int64(h.Status), 10)
		sep = ","
	}
	str(`"form":`, h.Form)
	str(`"stream":`, h.Stream)
	if len(h.EventIDs) > 0 {
		dst = append(append(dst, sep...), `"eventIds":`...)
		sep = ","
		for i, id := range h.EventIDs {
			if i == 0 {
				dst = append(dst, '[')
			} else {
				dst = append(dst, ',')
			}
			dst = appendString(dst, id)
		}
		dst = append(dst, ']')
	}
	headers(`"requestHeaders":`, h.RequestHeaders)
	headers(`"responseHeaders":`, h.ResponseHeaders)
	str(`"body":`, h.Body)
	if sep == "{" {
		return append(dst, "{}"...)
	}
	return append(dst, '}')
}

func appendFlatMessage(dst []byte, m *cassettes.Message) []byte {
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

func appendMillis(dst []byte, m cassettes.Millis) []byte {
	return cassettefile.AppendMillis(dst, float64(m))
}

// appendString appends s as encoding/json writes it without HTML escaping.
func appendString(dst []byte, s string) []byte { return cassettefile.AppendQuoted(dst, s) }

// appendIndented appends the valid JSON text src indented as
// json.Indent(dst, src, prefix, indent) does, white space outside strings
// dropped (as json.Compact would first). A line break and its indentation
// go in one append, sliced from a run of them built once a call; a number
// or a literal goes in one append too.
func appendIndented(dst, src []byte, prefix, indent string) ([]byte, error) {
	depth := 0
	open := false // after '{' or '[': the line break waits, an empty one closes at once
	var padBuf [128]byte
	pad := append(append(padBuf[:0], '\n'), prefix...) // "\n" + prefix + indent × as deep as needed
	newline := func() {
		n := 1 + len(prefix) + depth*len(indent)
		for len(pad) < n {
			pad = append(pad, indent...)
		}
		dst = append(dst, pad[:n]...)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if indentSpace[c] {
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
				if depth == 0 {
					return dst, errors.New("encode cassette: unbalanced JSON")
				}
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
			// A number or a literal: up to the next byte that is not one.
			end := i + 1
			for end < len(src) && !indentStop[src[end]] {
				end++
			}
			dst = append(dst, src[i:end]...)
			i = end - 1
		}
	}
	if depth != 0 || open {
		return dst, errors.New("encode cassette: unbalanced JSON")
	}
	return dst, nil
}

// indentSpace are the bytes of white space outside strings; indentStop the
// bytes that end a number or a literal (white space and JSON's punctuation).
var indentSpace, indentStop = func() (space, stop [256]bool) {
	for _, c := range []byte(" \t\n\r") {
		space[c], stop[c] = true, true
	}
	for _, c := range []byte(`"{}[],:`) {
		stop[c] = true
	}
	return space, stop
}()

// fingerprint summarises what can change in an interaction while it is
// recorded: which messages it holds (by identity and length: a recorded
// message's bytes never change once set) and its HTTP details. Two calls
// with the same seed give the same value for an interaction that did not
// change.
func fingerprint(seed maphash.Seed, in *cassettes.Interaction) uint64 {
	var p printer
	p.h.SetSeed(seed)
	raw := func(b []byte) {
		if len(b) == 0 {
			p.word(0)
			p.word(0)
			return
		}
		p.word(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
		p.word(uint64(len(b)))
	}
	p.str(string(in.From))
	p.word(uint64(int64(float64(in.AtMs) * 1000)))
	raw(in.Request)
	raw(in.Notification)
	raw(in.Match)
	if in.Raw != nil {
		p.str(*in.Raw)
	}
	before := uint64(0)
	if in.BeforeResponse {
		before = 1
	}
	for _, v := range [...]uint64{uint64(in.Batch), uint64(in.Times), before, uint64(in.AfterExchange), uint64(len(in.Exchange))} {
		p.word(v)
	}
	msg := func(m *cassettes.Message) {
		if m == nil {
			p.word(1)
			return
		}
		p.str(string(m.From))
		p.word(uint64(int64(float64(m.AtMs) * 1000)))
		raw(m.Message)
		if m.Raw != nil {
			p.str(*m.Raw)
		}
	}
	for i := range in.Exchange {
		msg(&in.Exchange[i])
	}
	msg(in.Response)
	if in.HTTP != nil {
		hp := in.HTTP
		for _, v := range [...]uint64{uint64(hp.Status), uint64(len(hp.EventIDs)), uint64(len(hp.RequestHeaders)), uint64(len(hp.ResponseHeaders))} {
			p.word(v)
		}
		p.str(hp.URL)
		p.str(hp.Form)
		p.str(hp.Stream)
		p.str(hp.Body)
		for _, id := range hp.EventIDs {
			p.str(id)
		}
		for _, m := range []map[string]string{hp.RequestHeaders, hp.ResponseHeaders} {
			for k, v := range m {
				// Order-independent: add the pair's hash.
				var ph maphash.Hash
				ph.SetSeed(seed)
				ph.WriteString(k)
				ph.WriteString(v)
				p.word(ph.Sum64())
			}
		}
	}
	p.word(uint64(uintptr(unsafe.Pointer(in.When))))
	p.word(uint64(uintptr(unsafe.Pointer(in.Fault))))
	return p.sum()
}

// printer is the hash of a fingerprint: words gather in buf and go to the
// hash together, not eight bytes a call.
type printer struct {
	h   maphash.Hash
	buf [128]byte
	n   int
}

func (p *printer) word(v uint64) {
	if p.n+8 > len(p.buf) {
		p.flush()
	}
	binary.LittleEndian.PutUint64(p.buf[p.n:], v)
	p.n += 8
}

// str adds s and its length.
func (p *printer) str(s string) {
	p.flush()
	p.h.WriteString(s)
	p.word(uint64(len(s)))
}

func (p *printer) flush() {
	p.h.Write(p.buf[:p.n])
	p.n = 0
}

func (p *printer) sum() uint64 {
	p.flush()
	return p.h.Sum64()
}
