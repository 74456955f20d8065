package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
)

// PinVersion is the version of the pin file format (record --pin) that
// this mcpmock reads and writes.
const PinVersion = 1

// ErrPinFile is the cause of every error about the content of a pin file:
// it is not JSON, not of PinVersion, or a tool's fingerprint does not
// match its definition. mcpmock never overwrites such a file.
var ErrPinFile = errors.New("invalid pin file")

// pinnedFields are the members of a tool definition that a pin holds, in
// the order of the canonical form (sorted).
var pinnedFields = []string{"annotations", "description", "inputSchema", "name", "outputSchema", "title"}

// pinFile is the content of a pin file.
type pinFile struct {
	Version int       `json:"version"`
	Server  pinServer `json:"server"`
	// Tools are sorted by name.
	Tools []pinnedTool `json:"tools"`
}

// pinServer says which server the pin was written from.
type pinServer struct {
	// Source is the command or the upstream URL of the tap.
	Source string `json:"source,omitempty"`
	// Name and Version are the serverInfo of its initialize or
	// server/discover answer.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

type pinnedTool struct {
	Name        string          `json:"name"`
	Fingerprint string          `json:"fingerprint"`
	Definition  json.RawMessage `json:"definition"`
}

// Fingerprint returns the fingerprint of a tool definition (one element
// of a tools/list result's tools) and the canonical form it is computed
// on: "sha256:" and the hex SHA-256 of the canonical JSON of the members
// name, title, description, inputSchema, outputSchema and annotations
// (others, such as icons or _meta, are not part of it). The canonical JSON
// has no whitespace, the members of every object sorted by name, strings
// as encoding/json writes them (without HTML escaping) and numbers as
// they were written; a member that is null, and annotations that are an
// empty object, count as absent. Key order and whitespace thus never
// change a fingerprint.
func Fingerprint(tool json.RawMessage) (fingerprint string, canonical json.RawMessage, err error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(tool, &members); err != nil {
		return "", nil, fmt.Errorf("a tool definition is not a JSON object: %w", err)
	}
	def := map[string]any{}
	for _, f := range pinnedFields {
		raw, ok := members[f]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return "", nil, fmt.Errorf("a tool definition's %s: %w", f, err)
		}
		if m, ok := v.(map[string]any); ok && f == "annotations" && len(m) == 0 {
			continue
		}
		def[f] = v
	}
	if _, ok := def["name"].(string); !ok {
		return "", nil, errors.New("a tool definition has no name")
	}
	var buf bytes.Buffer
	writeCanonical(&buf, def)
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), buf.Bytes(), nil
}

func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// writeCanonical writes v (as decodeJSON returns it) in canonical form.
func writeCanonical(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			writeCanonical(buf, v[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, e)
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, v)
	case json.Number:
		buf.WriteString(v.String())
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	e := json.NewEncoder(buf)
	e.SetEscapeHTML(false)
	e.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// loadPin reads a pin file; a missing file is (nil, nil).
func loadPin(path string) (*pinFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pin file %q: %w", path, err)
	}
	return parsePin(path, data)
}

// parsePin decodes and checks the content of a pin file.
func parsePin(path string, data []byte) (*pinFile, error) {
	at := func(offset int64, why string) error {
		line, col := cassettes.Position(data, offset)
		return fmt.Errorf("pin file %q: line %d, column %d: %w: %s; fix it or remove the file (mcpmock never overwrites it)", path, line, col, ErrPinFile, why)
	}
	var p pinFile
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, at(se.Offset-1, se.Error())
		case errors.As(err, &te):
			return nil, at(te.Offset-1, fmt.Sprintf("%s is a JSON %s, want %s", te.Field, te.Value, te.Type))
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, at(int64(len(data)), "unexpected end of file")
		}
		return nil, at(d.InputOffset(), err.Error())
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, at(d.InputOffset(), "data after the pin")
	}
	if p.Version != PinVersion {
		return nil, fmt.Errorf("pin file %q: %w: version %d, this mcpmock reads version %d", path, ErrPinFile, p.Version, PinVersion)
	}
	seen := map[string]bool{}
	for i, t := range p.Tools {
		fp, canon, err := Fingerprint(t.Definition)
		p.Tools[i].Definition = canon
		switch {
		case err != nil:
			return nil, fmt.Errorf("pin file %q: tools[%d] (%q): %w: %v", path, i, t.Name, ErrPinFile, err)
		case t.Name != pinnedName(t.Definition):
			return nil, fmt.Errorf("pin file %q: tools[%d]: %w: its name %q is not its definition's name %q", path, i, ErrPinFile, t.Name, pinnedName(t.Definition))
		case seen[t.Name]:
			return nil, fmt.Errorf("pin file %q: tools[%d]: %w: tool %q is pinned twice", path, i, ErrPinFile, t.Name)
		case fp != t.Fingerprint:
			return nil, fmt.Errorf("pin file %q: tools[%d] (%q): %w: its fingerprint %s is not that of its definition (%s): was the definition edited? remove the file, or run with --pin-update, to pin the server's current tools", path, i, t.Name, ErrPinFile, t.Fingerprint, fp)
		}
		seen[t.Name] = true
	}
	return &p, nil
}

func pinnedName(def json.RawMessage) string {
	var t struct {
		Name string `json:"name"`
	}
	json.Unmarshal(def, &t)
	return t.Name
}

// encode writes the pin file's content: indented, tools sorted by name,
// each definition in canonical form indented, so that the same pin is
// always the same bytes.
func (p *pinFile) encode() []byte {
	slices.SortFunc(p.Tools, func(a, b pinnedTool) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(p); err != nil {
		panic(err) // the definitions are canonical JSON
	}
	return buf.Bytes()
}

// savePin writes a pin file atomically (a temporary file in the same
// directory, synced, then renamed over it): the file holds the old pin or
// the new one, whatever happens.
func savePin(path string, p *pinFile) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write pin file %q: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(p.encode()); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write pin file %q: %w", path, err)
	}
	return nil
}
