package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/mcpmock/mcpmock/internal/grow"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// This file decodes an interaction from its raw JSON with a scanner rather
// than with reflection: a large cassette loads several times faster, and
// the messages stay sub-slices of the interaction's bytes instead of being
// copied once more.

// fieldError is an error about the member key of an interaction.
type fieldError struct {
	key string
	err error
}

func (e *fieldError) Error() string { return fmt.Sprintf("%q: %v", e.key, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// decodeInteraction decodes one interaction (valid JSON). Unknown members
// are errors, as with encoding/json's DisallowUnknownFields.
func decodeInteraction(raw []byte) (Interaction, error) {
	var in Interaction
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return in, errors.New("an interaction must be a JSON object")
	}
	err := jsonrpc.EachMember(raw, func(key string, v []byte) error {
		var err error
		switch key {
		case "from":
			in.From, err = direction(v)
		case "atMs":
			in.AtMs, err = millis(v)
		case "request":
			in.Request = rawOrNil(v)
		case "notification":
			in.Notification = rawOrNil(v)
		case "raw":
			in.Raw, err = strPtr(v)
		case "batch":
			in.Batch, err = integer(v)
		case "exchange":
			if isNull(v) {
				break
			}
			err = jsonrpc.EachElement(v, func(e []byte) error {
				m, err := decodeMessage(e)
				if err == nil {
					in.Exchange = append(in.Exchange, m)
				}
				return err
			})
		case "response":
			if isNull(v) {
				break
			}
			var m Message
			if m, err = decodeMessage(v); err == nil {
				in.Response = &m
			}
		case "match":
			in.Match = rawOrNil(v)
		case "times":
			in.Times, err = integer(v)
		case "beforeResponse":
			in.BeforeResponse, err = boolean(v)
		case "afterExchange":
			in.AfterExchange, err = integer(v)
		// Decoded through a variable of their own, so that in is not
		// moved to the heap for every interaction.
		case "http":
			var h *HTTP
			err = strict(v, &h)
			in.HTTP = h
		case "when":
			var w *When
			err = strict(v, &w)
			in.When = w
		case "fault":
			var f *Fault
			err = strict(v, &f)
			in.Fault = f
		default:
			err = errors.New("unknown member")
		}
		if err != nil {
			return &fieldError{key, err}
		}
		return nil
	})
	return in, err
}

func decodeMessage(raw []byte) (Message, error) {
	var m Message
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return m, errors.New("a message must be a JSON object")
	}
	err := jsonrpc.EachMember(raw, func(key string, v []byte) error {
		var err error
		switch key {
		case "from":
			m.From, err = direction(v)
		case "atMs":
			m.AtMs, err = millis(v)
		case "message":
			m.Message = rawOrNil(v)
		case "raw":
			m.Raw, err = strPtr(v)
		case "batch":
			m.Batch, err = integer(v)
		default:
			err = errors.New("unknown member")
		}
		if err != nil {
			return &fieldError{key, err}
		}
		return nil
	})
	return m, err
}

// direction decodes a "from" member; the two directions are not copied,
// one string each for a whole cassette.
func direction(v []byte) (Direction, error) {
	switch string(v) {
	case `"client"`:
		return FromClient, nil
	case `"server"`:
		return FromServer, nil
	}
	s, err := str(v)
	return Direction(s), err
}

func isNull(v []byte) bool { return string(v) == "null" }

func rawOrNil(v []byte) json.RawMessage {
	if isNull(v) {
		return nil
	}
	return json.RawMessage(v)
}

func str(v []byte) (string, error) {
	s, ok := jsonrpc.Unquote(v)
	if !ok {
		return "", fmt.Errorf("want a string, not %.20s", v)
	}
	return s, nil
}

func strPtr(v []byte) (*string, error) {
	if isNull(v) {
		return nil, nil
	}
	s, err := str(v)
	return &s, err
}

func millis(v []byte) (Millis, error) {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, fmt.Errorf("want a number, not %.20s", v)
	}
	return Millis(f), nil
}

func boolean(v []byte) (bool, error) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false, not %.20s", v)
}

func integer(v []byte) (int, error) {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("want an integer, not %.20s", v)
	}
	return n, nil
}

// strict decodes a small structured member with encoding/json, refusing
// unknown members.
func strict(v []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// reserve grows the interactions of a cassette being decoded once, when
// the first 64 are in, to the number that the whole array (size bytes, of
// which the next interaction starts at offset next) holds at their average
// size, and a little more: a large cassette then fills one slice of about
// the right size instead of growing it by copies, or reserving far more
// than it needs. Append grows it past that when the guess is short.
func reserve(ins []Interaction, size, next int) []Interaction {
	if len(ins) != 64 || cap(ins) > 64 || next <= 0 {
		return ins
	}
	want := int(int64(size) * 64 / int64(next))
	want += want/16 + 16
	return append(grow.Make[[]Interaction](want), ins...)
}

// The fast load: one pass over the file, read in pieces, that checks the
// JSON as it walks it and copies each message, compacted, into a few large
// chunks of its own, so that neither the file nor a copy of it is held.
// It gives up (errSlow) on anything out of the ordinary, errors included:
// then the file is decoded whole by decode, which gives the same result
// and reports errors with their line and column.

// errSlow says the fast load gave up.
var errSlow = errors.New("cassettes: not for the fast load")

// readChunk is the bytes read at a time (a variable for tests).
var readChunk = 256 << 10

const (
	arenaChunk = 1 << 20 // bytes of messages per chunk
	lookahead  = 4 << 10 // bytes a top-level token may take
)

// loader is the state of a fast load.
type loader struct {
	r    io.Reader // nil when buf is all the data
	buf  []byte    // data read and not dropped; buf[pos:] is unread
	pos  int
	base int64 // offset in the file of buf[0]
	eof  bool
	size int64 // the file's size, to reserve interactions; 0 if unknown

	scratch []byte // a message being compacted
	arena   []byte // the current chunk of messages
}

// fastLoad decodes a cassette from r (or from data, when r is nil).
func fastLoad(r io.Reader, data []byte, size int64) (*Cassette, error) {
	l := &loader{r: r, buf: data, eof: r == nil, size: size}
	if r != nil {
		l.buf = make([]byte, 0, readChunk)
	}
	return l.cassette()
}

// more reads more of the file, dropping what was read before pos first;
// it returns false at the end of the file.
func (l *loader) more() bool {
	if l.eof {
		return false
	}
	if l.pos > 0 {
		n := copy(l.buf, l.buf[l.pos:])
		l.base += int64(l.pos)
		l.buf, l.pos = l.buf[:n], 0
	}
	if len(l.buf) == cap(l.buf) {
		l.buf = slices.Grow(l.buf, cap(l.buf))
	}
	n, err := l.r.Read(l.buf[len(l.buf):cap(l.buf)])
	l.buf = l.buf[:len(l.buf)+n]
	if err != nil {
		l.eof = true
	}
	return true
}

// skip moves pos past white space, reading on as needed, and makes sure
// that at least lookahead bytes follow (unless the file ends first).
func (l *loader) skip() {
	for {
		l.pos = spaceAt(l.buf, l.pos)
		if len(l.buf)-l.pos >= lookahead || !l.more() {
			return
		}
	}
}

func spaceAt(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value decodes the value at pos with f, reading more of the file and
// trying again when the buffer ends inside it.
func (l *loader) value(f func(b []byte, i int) (int, bool)) error {
	for {
		if end, ok := f(l.buf, l.pos); ok {
			l.pos = end
			return nil
		}
		if !l.more() {
			return errSlow
		}
	}
}

// peek is the byte at pos, 0 at the end.
func (l *loader) peek() byte {
	if l.pos < len(l.buf) {
		return l.buf[l.pos]
	}
	return 0
}

// key reads a member name with no escapes and the colon after it.
func (l *loader) key() (string, error) {
	l.skip()
	b, i := l.buf, l.pos
	if i >= len(b) || b[i] != '"' {
		return "", errSlow
	}
	e := i + 1
	for e < len(b) && b[e] != '"' && b[e] != '\\' && b[e] >= 0x20 {
		e++
	}
	if e >= len(b) || b[e] != '"' {
		return "", errSlow
	}
	k := b[i+1 : e]
	l.pos = e + 1
	l.skip()
	if l.peek() != ':' {
		return "", errSlow
	}
	l.pos++
	l.skip()
	return knownKey(k), nil
}

// knownKey returns the top-level member names without copying them.
func knownKey(k []byte) string {
	for _, s := range [...]string{"version", "meta", "match", "replay", "interactions"} {
		if string(k) == s {
			return s
		}
	}
	return string(k)
}

// next reads the comma or the closing byte after a member or element; it
// returns true after a comma.
func (l *loader) next(closing byte) (bool, error) {
	l.skip()
	switch l.peek() {
	case ',':
		l.pos++
		return true, nil
	case closing:
		l.pos++
		return false, nil
	}
	return false, errSlow
}

func (l *loader) cassette() (*Cassette, error) {
	c := &Cassette{}
	hasVersion := false
	l.skip()
	if l.peek() != '{' {
		return nil, errSlow
	}
	l.pos++
	l.skip()
	if l.peek() == '}' {
		return nil, errSlow // no version
	}
	for more := true; more; {
		key, err := l.key()
		if err != nil {
			return nil, err
		}
		switch key {
		case "version":
			err = l.value(func(b []byte, i int) (int, bool) {
				e, ok := jsonrpc.ValidAt(b, i, 1)
				if !ok || e >= len(b) {
					return e, false // a number must be followed by something
				}
				n, err := strconv.Atoi(string(b[i:e]))
				if err != nil || n != Version {
					return e, false
				}
				c.Version, hasVersion = n, true
				return e, true
			})
		case "$schema":
			err = l.value(func(b []byte, i int) (int, bool) {
				e, ok := jsonrpc.ValidAt(b, i, 1)
				if !ok || e >= len(b) {
					return e, false
				}
				return e, json.Unmarshal(b[i:e], &c.Schema) == nil
			})
		case "meta", "replay", "match":
			err = l.value(func(b []byte, i int) (int, bool) {
				e, ok := jsonrpc.ValidAt(b, i, 1)
				if !ok || e >= len(b) {
					return e, false
				}
				switch v := b[i:e]; key {
				case "meta":
					ok = strict(v, &c.Meta) == nil
				case "replay":
					ok = strict(v, &c.Replay) == nil
				case "match":
					c.Match = l.message(b, i, 1)
				}
				return e, ok
			})
		case "interactions":
			err = l.interactions(c)
		default:
			return nil, errSlow
		}
		if err != nil {
			return nil, err
		}
		if more, err = l.next('}'); err != nil {
			return nil, err
		}
	}
	l.skip()
	if l.pos != len(l.buf) || !hasVersion {
		return nil, errSlow
	}
	if c.Interactions == nil {
		c.Interactions = []Interaction{}
	}
	return c, nil
}

func (l *loader) interactions(c *Cassette) error {
	if b := l.buf[l.pos:]; len(b) >= 4 && string(b[:4]) == "null" {
		l.pos += 4
		return nil
	}
	if l.peek() != '[' {
		return errSlow
	}
	start := l.base + int64(l.pos)
	l.pos++
	l.skip()
	c.Interactions = make([]Interaction, 0, 64)
	if l.peek() == ']' {
		l.pos++
		return nil
	}
	for {
		if len(c.Interactions) == 64 && l.size > 0 {
			c.Interactions = reserve(c.Interactions, int(l.size-start), int(l.base+int64(l.pos)-start))
		}
		// Decoded in its place in the slice: a variable would be moved
		// to the heap, one allocation per interaction.
		c.Interactions = append(c.Interactions, Interaction{})
		in := &c.Interactions[len(c.Interactions)-1]
		arena := l.arena
		err := l.value(func(b []byte, i int) (int, bool) {
			*in = Interaction{}
			l.arena = arena // a retry writes its messages again
			return l.interaction(in, b, i)
		})
		if err != nil {
			return err
		}
		if !normalized(in) {
			in.normalize()
		}
		if in.validate() != nil {
			return errSlow
		}
		more, err := l.next(']')
		if err != nil || !more {
			return err
		}
		l.skip()
	}
}

// message copies the JSON value at b[i] (valid, checked by the caller or
// checked here) compacted into the arena; nil for null.
func (l *loader) message(b []byte, i, depth int) json.RawMessage {
	m, _, ok := l.compact(b, i, depth)
	if !ok {
		return nil
	}
	return m
}

// compact checks the value at b[i] and copies it, compacted, into the
// arena (null is nil); it returns the offset past it.
func (l *loader) compact(b []byte, i, depth int) (json.RawMessage, int, bool) {
	if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
		return nil, i + 4, true
	}
	var e int
	var ok bool
	l.scratch, e, ok = jsonrpc.AppendCompact(l.scratch[:0], b, i, depth)
	if !ok {
		return nil, e, false
	}
	n := len(l.scratch)
	if cap(l.arena)-len(l.arena) < n {
		// Chunks double up to arenaChunk, and are never larger than
		// the file: a small cassette takes little.
		want := min(arenaChunk, max(4<<10, 2*cap(l.arena)))
		if l.size > 0 {
			want = min(want, int(l.size))
		}
		l.arena = grow.Make[[]byte](max(want, n))
	}
	at := len(l.arena)
	l.arena = append(l.arena, l.scratch...)
	return json.RawMessage(l.arena[at : at+n : at+n]), e, true
}

// walkObject walks the members of the object at b[i] with f, which decodes
// the value at b[j] and returns the offset past it; names with escapes are
// left to the slow load.
func walkObject(b []byte, i int, f func(key []byte, j int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	i = spaceAt(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		e := i + 1
		for e < len(b) && b[e] != '"' && b[e] != '\\' && b[e] >= 0x20 {
			e++
		}
		if e >= len(b) || b[e] != '"' {
			return e, false
		}
		key := b[i+1 : e]
		j := spaceAt(b, e+1)
		if j >= len(b) || b[j] != ':' {
			return j, false
		}
		var ok bool
		if i, ok = f(key, spaceAt(b, j+1)); !ok {
			return i, false
		}
		i = spaceAt(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = spaceAt(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scalar is the number or string at b[i] and the offset past it.
func scalar(b []byte, i int) ([]byte, int, bool) {
	e, ok := jsonrpc.ValidAt(b, i, 0)
	if !ok || e >= len(b) || b[i] == '{' || b[i] == '[' {
		return nil, e, false
	}
	return b[i:e], e, true
}

func fastDirection(v []byte) (Direction, bool) {
	switch string(v) {
	case `"client"`:
		return FromClient, true
	case `"server"`:
		return FromServer, true
	}
	return "", false
}

// interaction decodes the interaction at b[i] (depth 2 in the file).
func (l *loader) interaction(in *Interaction, b []byte, i int) (int, bool) {
	return walkObject(b, i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "request", "notification", "match":
			m, e, ok := l.compact(b, j, 3)
			switch key[0] {
			case 'r':
				in.Request = m
			case 'n':
				in.Notification = m
			default:
				in.Match = m
			}
			return e, ok
		case "response":
			if len(b)-j >= 4 && string(b[j:j+4]) == "null" {
				return j + 4, true
			}
			var m Message
			e, ok := l.fastMessage(&m, b, j, 3)
			in.Response = &m
			return e, ok
		case "exchange":
			if len(b)-j >= 4 && string(b[j:j+4]) == "null" {
				return j + 4, true
			}
			if j >= len(b) || b[j] != '[' {
				return j, false
			}
			k := spaceAt(b, j+1)
			if k < len(b) && b[k] == ']' {
				return k + 1, true
			}
			for {
				var m Message
				e, ok := l.fastMessage(&m, b, k, 4)
				if !ok {
					return e, false
				}
				in.Exchange = append(in.Exchange, m)
				k = spaceAt(b, e)
				if k >= len(b) {
					return k, false
				}
				switch b[k] {
				case ',':
					k = spaceAt(b, k+1)
				case ']':
					return k + 1, true
				default:
					return k, false
				}
			}
		case "http", "when", "fault":
			e, ok := jsonrpc.ValidAt(b, j, 3)
			if !ok {
				return e, false
			}
			var err error
			switch key[0] {
			case 'h':
				err = strict(b[j:e], &in.HTTP)
			case 'w':
				err = strict(b[j:e], &in.When)
			default:
				err = strict(b[j:e], &in.Fault)
			}
			return e, err == nil
		}
		v, e, ok := scalar(b, j)
		if !ok {
			return e, false
		}
		switch string(key) {
		case "times":
			var err error
			in.Times, err = integer(v)
			return e, err == nil
		case "beforeResponse":
			var err error
			in.BeforeResponse, err = boolean(v)
			return e, err == nil
		case "afterExchange":
			var err error
			in.AfterExchange, err = integer(v)
			return e, err == nil
		}
		return e, head(key, v, &in.From, &in.AtMs, &in.Raw, &in.Batch)
	})
}

// head decodes a scalar member that interactions and messages share:
// "from", "atMs", "raw" and "batch"; false for any other or a bad value.
func head(key, v []byte, from *Direction, at *Millis, raw **string, batch *int) bool {
	ok, err := true, error(nil)
	switch string(key) {
	case "from":
		*from, ok = fastDirection(v)
	case "atMs":
		*at, err = millis(v)
	case "raw":
		*raw, err = strPtr(v)
	case "batch":
		*batch, err = integer(v)
	default:
		ok = false
	}
	return ok && err == nil
}

// fastMessage decodes a Message at b[i].
func (l *loader) fastMessage(m *Message, b []byte, i, depth int) (int, bool) {
	return walkObject(b, i, func(key []byte, j int) (int, bool) {
		if string(key) == "message" {
			var e int
			var ok bool
			m.Message, e, ok = l.compact(b, j, depth+1)
			return e, ok
		}
		v, e, ok := scalar(b, j)
		if !ok {
			return e, false
		}
		return e, head(key, v, &m.From, &m.AtMs, &m.Raw, &m.Batch)
	})
}

// normalized says that normalize would leave in as it is: every direction
// is written, and every message starts with its "jsonrpc" member (and the
// id, for requests and responses). That is how mcpmock writes cassettes,
// and normalize's look-ups cost a fifth of a large load.
func normalized(in *Interaction) bool {
	const env, envID = `{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0","id":`
	if in.From == "" || (in.Request != nil && !bytes.HasPrefix(in.Request, []byte(envID))) ||
		(in.Notification != nil && !bytes.HasPrefix(in.Notification, []byte(env))) {
		return false
	}
	if r := in.Response; r != nil && (r.From == "" || (r.Message != nil && !bytes.HasPrefix(r.Message, []byte(envID)))) {
		return false
	}
	for i := range in.Exchange {
		if m := &in.Exchange[i]; m.From == "" || (m.Message != nil && !bytes.HasPrefix(m.Message, []byte(env))) {
			return false
		}
	}
	return true
}
