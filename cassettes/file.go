package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// Load reads a cassette file.
func Load(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load cassette: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a cassette; name is used in errors.
func Parse(name string, data []byte) (*Cassette, error) {
	posErr := func(offset int64, err error) error {
		line, col := Position(data, offset)
		return &PosError{File: name, Line: line, Column: col, Err: err}
	}
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, posErr(errOffset(err, data), cleanJSONError(err))
	}
	if head.Version == nil {
		return nil, posErr(0, fmt.Errorf("%w: no \"version\" member (this mcpmock reads version %d)", ErrInvalid, Version))
	}
	if *head.Version != Version {
		off := int64(bytes.Index(data, []byte(`"version"`)))
		return nil, posErr(off, fmt.Errorf("%w: the file has format version %d, this mcpmock reads version %d", ErrVersion, *head.Version, Version))
	}
	var c Cassette
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		off := errOffset(err, data)
		if off == 0 {
			off = dec.InputOffset()
		}
		return nil, posErr(off, cleanJSONError(err))
	}
	if c.Interactions == nil {
		c.Interactions = []Interaction{}
	}
	c.compact()
	for i := range c.Interactions {
		c.Interactions[i].normalize()
	}
	if i, err := c.Validate(); err != nil {
		return nil, posErr(interactionOffset(data, i), err)
	}
	return &c, nil
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
		if _, err := jsonrpc.Parse(m.Message); err != nil {
			return err
		}
	}
	return nil
}

func wantKind(raw json.RawMessage, k jsonrpc.Kind) error {
	msg, err := jsonrpc.Parse(raw)
	if err != nil {
		return err
	}
	if msg.Kind() != k {
		return fmt.Errorf("is a JSON-RPC %s, want a %s", msg.Kind(), k)
	}
	return nil
}

// compact rewrites every message on one line: the file is pretty-printed,
// but a message is sent as one line on stdio. Member order and the text of
// numbers are kept.
func (c *Cassette) compact() {
	one := func(raw *json.RawMessage) {
		if *raw == nil || bytes.IndexByte(*raw, '\n') < 0 {
			return
		}
		var buf bytes.Buffer
		if json.Compact(&buf, *raw) == nil {
			*raw = buf.Bytes()
		}
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		one(&in.Request)
		one(&in.Notification)
		one(&in.Match)
		for j := range in.Exchange {
			one(&in.Exchange[j].Message)
		}
		if in.Response != nil {
			one(&in.Response.Message)
		}
	}
	one(&c.Match)
}

// Encode returns the cassette as pretty-printed JSON with a final newline.
// Messages keep their members in recorded order.
func Encode(c *Cassette) ([]byte, error) {
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
	return WriteFileAtomic(path, data)
}

// WriteFileAtomic writes data to path by way of a synced temporary file in
// the same directory and a rename, so that path always holds either the old
// or the new content.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("save cassette: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
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

func errOffset(err error, data []byte) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset - 1 // Offset counts the offending byte
	case errors.As(err, &te):
		return te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(data))
	}
	return 0
}

func cleanJSONError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: unexpected end of file", ErrInvalid)
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

// interactionOffset finds where the i-th interaction starts in data.
func interactionOffset(data []byte, i int) int64 {
	if i < 0 {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		if key != "interactions" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return 0
		}
		for n := 0; dec.More(); n++ {
			off := dec.InputOffset()
			if n == i {
				// InputOffset is just past the previous element or '['; step
				// over the separator and spaces to the element itself.
				for off < int64(len(data)) && bytes.IndexByte([]byte(", \t\r\n"), data[off]) >= 0 {
					off++
				}
				return off
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
		}
	}
	return 0
}
