package cassettes

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpmock/mcpmock/internal/cassettefile"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Errors of Load; compare with errors.Is.
var (
	// ErrVersion: the file has another format version than this package.
	ErrVersion = errors.New("unsupported cassette version")
	// ErrInvalid: the file is JSON but not a valid cassette.
	ErrInvalid = errors.New("invalid cassette")
)

// PosError is an error at a position of a cassette file.
type PosError struct {
	File         string
	Line, Column int
	Err          error
}

func (e *PosError) Error() string {
	return fmt.Sprintf("load cassette %q: line %d, column %d: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *PosError) Unwrap() error { return e.Err }

// Load reads a cassette file. The file is read in pieces and its messages
// are copied out of it compacted, into a few large chunks: a large cassette
// takes about the size of its messages in memory, not the size of the file.
// A path that is not a regular file (after symbolic links) is refused with
// ErrNotRegular before anything is read.
//
// An old cassette's exact repeats of SSE events (a server re-sent them on a
// resumed stream and the tap recorded them as new messages) are dropped,
// and Warnings says so.
func Load(path string) (*Cassette, error) {
	c, err := load(path)
	if err != nil {
		return nil, err
	}
	c.dropEchoes()
	return c, nil
}

func load(path string) (*Cassette, error) {
	f, size, err := cassettefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if c, err := fastLoad(f, nil, size); err == nil {
		return c, nil
	}
	// The slow path reads the whole file and reports where it went wrong.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("load cassette %q: %w", path, cassettefile.PlainError(err))
	}
	data, err := cassettefile.ReadAll(f, size)
	if err != nil {
		return nil, fmt.Errorf("load cassette %q: %w", path, cassettefile.PlainError(err))
	}
	return parse(path, data)
}

// Parse decodes a cassette; name is used in errors. data is not changed.
// It drops transport echoes as Load does.
func Parse(name string, data []byte) (*Cassette, error) {
	c, err := parseAll(name, data)
	if err != nil {
		return nil, err
	}
	c.dropEchoes()
	return c, nil
}

// parseAll is Parse keeping every interaction, for Lint.
func parseAll(name string, data []byte) (*Cassette, error) {
	if c, err := fastLoad(nil, data, int64(len(data))); err == nil {
		return c, nil
	}
	return parse(name, bytes.Clone(data))
}

// parse decodes data, which it owns (messages are compacted in place).
func parse(name string, data []byte) (*Cassette, error) {
	c, perr := decode(data)
	if perr != nil {
		return nil, perr.at(name, data)
	}
	return c, nil
}

// decodeError is an error at a byte offset, before the offset is turned
// into a line and a column.
type decodeError struct {
	offset int64
	// skip says the offset is where an element's separator starts: the
	// element itself starts after the comma and spaces.
	skip bool
	// extra is added after skipping: the offset of the trouble inside the
	// element.
	extra int64
	// syntax says the JSON is broken: the position is found again on the
	// whole file, as stream offsets are not reliable.
	syntax bool
	err    error
}

func (e *decodeError) at(name string, data []byte) error {
	if e.syntax {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			e = &decodeError{offset: se.Offset - 1, err: cleanJSONError(err)}
			if se.Offset >= int64(len(data)) {
				e.err = fmt.Errorf("%w: unexpected end of file", ErrInvalid)
			}
		}
	}
	off := e.offset
	if e.skip {
		for off < int64(len(data)) && bytes.IndexByte([]byte(", \t\r\n"), data[off]) >= 0 {
			off++
		}
		off += e.extra
	}
	if v := sniffVersion(data); v != nil && *v != Version && !errors.Is(e.err, ErrVersion) {
		// A file of another version fails for that reason first.
		off = int64(bytes.Index(data, []byte(`"version"`)))
		e = &decodeError{err: versionError(*v)}
	}
	line, col := Position(data, off)
	return &PosError{File: name, Line: line, Column: col, Err: e.err}
}

func versionError(v int) error {
	return fmt.Errorf("%w: the file has format version %d, this mcpmock reads version %d", ErrVersion, v, Version)
}

// sniffVersion finds the top-level "version" of a file that may not
// decode.
func sniffVersion(data []byte) *int {
	var head struct {
		Version *int `json:"version"`
	}
	if json.Unmarshal(data, &head) != nil {
		return nil
	}
	return head.Version
}

// decode decodes a cassette from valid-or-not JSON with a scanner: the
// top-level members, then the interactions one by one, each decoded,
// compacted, completed and checked as it comes.
func decode(data []byte) (*Cassette, *decodeError) {
	if !jsonrpc.Valid(data) {
		return nil, &decodeError{syntax: true, err: fmt.Errorf("%w: not valid JSON", ErrInvalid)}
	}
	c := &Cassette{}
	var version *int
	var derr *decodeError
	err := jsonrpc.EachMemberAt(data, func(key string, keyAt int, v []byte, at int) error {
		fail := func(err error) error {
			derr = &decodeError{offset: int64(at), err: fmt.Errorf("%w: %q: %v", ErrInvalid, key, err)}
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				derr.offset += te.Offset
			}
			return derr
		}
		switch key {
		case "$schema":
			if err := json.Unmarshal(v, &c.Schema); err != nil {
				return fail(errors.New("want the URL of the format's JSON Schema, a string"))
			}
		case "version":
			n, err := integer(v)
			if err != nil {
				return fail(err)
			}
			version = &n
			if n != Version {
				derr = &decodeError{offset: int64(keyAt), err: versionError(n)}
				return derr
			}
		case "meta":
			if err := strict(v, &c.Meta); err != nil {
				return fail(err)
			}
		case "match":
			c.Match = rawOrNil(v)
			compactInPlace(&c.Match)
		case "replay":
			if err := strict(v, &c.Replay); err != nil {
				return fail(err)
			}
		case "interactions":
			if isNull(v) {
				return nil
			}
			c.Interactions = make([]Interaction, 0, 64)
			return jsonrpc.EachElementAt(v, func(elem []byte, eat int) error {
				c.Interactions = reserve(c.Interactions, len(v), eat)
				in, err := decodeInteraction(elem)
				off := int64(at + eat)
				if err != nil {
					derr = &decodeError{offset: off, err: fmt.Errorf("%w: interaction %d: %v", ErrInvalid, len(c.Interactions)+1, err)}
					var fe *fieldError
					if errors.As(err, &fe) {
						if i := bytes.Index(elem, []byte(strconv.Quote(fe.key))); i >= 0 {
							derr.offset += int64(i)
						}
					}
					return derr
				}
				in.compact()
				in.normalize()
				if err := in.validate(); err != nil {
					derr = &decodeError{offset: off, err: fmt.Errorf("%w: interaction %d: %v", ErrInvalid, len(c.Interactions)+1, err)}
					return derr
				}
				c.Interactions = append(c.Interactions, in)
				return nil
			})
		default:
			derr = &decodeError{offset: int64(keyAt), err: fmt.Errorf("%w: unknown member %q", ErrInvalid, key)}
			return derr
		}
		return nil
	})
	if derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, &decodeError{err: fmt.Errorf("%w: %v", ErrInvalid, err)}
	}
	if version == nil {
		return nil, &decodeError{err: fmt.Errorf("%w: no \"version\" member (this mcpmock reads version %d)", ErrInvalid, Version)}
	}
	if c.Interactions == nil {
		c.Interactions = []Interaction{}
	}
	c.Version = *version
	return c, nil
}

// Validate checks what JSON decoding cannot: that each interaction has one
// form, that its messages are JSON-RPC of the right kinds. It returns the
// index of the first bad interaction (-1 when the problem is elsewhere).
func (c *Cassette) Validate() (int, error) {
	for i := range c.Interactions {
		if err := c.Interactions[i].validate(); err != nil {
			return i, fmt.Errorf("%w: interaction %d: %v", ErrInvalid, i+1, err)
		}
	}
	return -1, nil
}

func (in *Interaction) validate() error {
	if in.When != nil {
		if err := in.When.validate(); err != nil {
			return err
		}
	}
	if in.Fault != nil {
		if err := in.Fault.validate(); err != nil {
			return err
		}
	}
	if in.From != FromClient && in.From != FromServer {
		return fmt.Errorf(`"from" must be "client" or "server", not %q`, in.From)
	}
	forms := 0
	for _, set := range []bool{in.Request != nil, in.Notification != nil, in.Raw != nil} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return errors.New(`needs exactly one of "request", "notification" and "raw"`)
	}
	if in.Request != nil {
		if err := wantKind(in.Request, jsonrpc.KindRequest); err != nil {
			return fmt.Errorf("request: %v", err)
		}
	}
	if in.Notification != nil {
		if err := wantKind(in.Notification, jsonrpc.KindNotification); err != nil {
			return fmt.Errorf("notification: %v", err)
		}
	}
	if in.HTTP != nil {
		for j, id := range in.HTTP.EventIDs {
			if jsonrpc.CheckEventID(id) != nil {
				return fmt.Errorf("http.eventIds[%d]: the SSE event id %q holds a line break or NUL, which would inject fields or an event into the replayed stream; take it out of the id", j, id)
			}
		}
	}
	if in.Request == nil && (len(in.Exchange) > 0 || in.Response != nil) {
		return errors.New(`only a "request" has an "exchange" or a "response"`)
	}
	for j, m := range in.Exchange {
		if err := m.validate(); err != nil {
			return fmt.Errorf("exchange[%d]: %v", j, err)
		}
	}
	if in.Response != nil {
		if err := in.Response.validate(); err != nil {
			return fmt.Errorf("response: %v", err)
		}
		if in.Response.Message != nil {
			if err := wantKind(in.Response.Message, jsonrpc.KindResponse); err != nil {
				return fmt.Errorf("response: %v", err)
			}
		}
	}
	return nil
}

func (m *Message) validate() error {
	if m.From != FromClient && m.From != FromServer {
		return fmt.Errorf(`"from" must be "client" or "server", not %q`, m.From)
	}
	if (m.Message == nil) == (m.Raw == nil) {
		return errors.New(`needs exactly one of "message" and "raw"`)
	}
	if m.Message != nil {
		if _, err := jsonrpc.CheckValid(m.Message); err != nil {
			return err
		}
	}
	return nil
}

func wantKind(raw json.RawMessage, k jsonrpc.Kind) error {
	kind, err := jsonrpc.CheckValid(raw)
	if err != nil {
		return err
	}
	if kind != k {
		return fmt.Errorf("is a JSON-RPC %s, want a %s", kind, k)
	}
	return nil
}

// compact rewrites every message of the interaction on one line: the file
// is pretty-printed, but a message is sent as one line on stdio. Member order
// and the text of numbers are kept.
func (in *Interaction) compact() {
	compactInPlace(&in.Request)
	compactInPlace(&in.Notification)
	compactInPlace(&in.Match)
	for j := range in.Exchange {
		compactInPlace(&in.Exchange[j].Message)
	}
	if in.Response != nil {
		compactInPlace(&in.Response.Message)
	}
}

// compactInPlace removes the white space outside strings of valid JSON, in
// the same buffer.
func compactInPlace(raw *json.RawMessage) {
	b := *raw
	w := 0
	inString := false
	for r := 0; r < len(b); r++ {
		c := b[r]
		if inString {
			b[w] = c
			w++
			switch c {
			case '\\':
				if r+1 < len(b) {
					r++
					b[w] = b[r]
					w++
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		b[w] = c
		w++
	}
	*raw = b[:w]
}

// Encode returns the cassette as pretty-printed JSON with a final newline.
// Messages keep their members in recorded order.
func Encode(c *Cassette) ([]byte, error) {
	if c.Interactions == nil || c.Schema == "" {
		cc := *c
		if cc.Interactions == nil {
			cc.Interactions = []Interaction{}
		}
		cc.Schema = cmp.Or(cc.Schema, SchemaURL)
		c = &cc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode cassette: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes the cassette to path atomically: to a temporary file in the
// same directory, synced, then renamed over path.
func Save(path string, c *Cassette) error {
	data, err := Encode(c)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// writeFileAtomic writes data to path by way of a synced temporary file in
// the same directory and a rename, so that path always holds either the old
// or the new content.
func writeFileAtomic(path string, data []byte) error {
	return cassettefile.WriteAtomic(path, true, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Position converts a byte offset of data into a 1-based line and column.
func Position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func cleanJSONError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: unexpected end of file", ErrInvalid)
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

func (e *decodeError) Error() string { return e.err.Error() }

// ErrNotRegular is the error of a cassette path that names something other
// than a regular file (after following symbolic links): a directory, a
// named pipe, a device, a socket. Such a path is refused at once: reading a
// named pipe would block, reading /dev/zero would never end.
var ErrNotRegular = cassettefile.ErrNotRegular

// ReadFile returns the content of the cassette file at path, which must be
// a regular file (or a symbolic link to one); anything else is refused
// with ErrNotRegular before it is read.
func ReadFile(path string) ([]byte, error) { return cassettefile.ReadFile(path) }
