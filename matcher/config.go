package matcher

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Config is the declarative matcher configuration: the "match" member of a
// cassette, of an interaction and of an overlay, the --match-* flags of
// mcpmock replay, and what WithConfig layers over a Matcher from Go. Paths
// are gjson paths relative to the request's params ("arguments.city",
// "_meta.com\.example\.nonce", "arguments.items.#.id"). The zero value
// loosens nothing.
//
// In JSON:
//
//	{
//	  "ignore":    ["arguments.timestamp"],
//	  "subset":    ["arguments.options"],
//	  "regex":     {"arguments.location": "^New "},
//	  "type":      {"arguments.nonce": "string"},
//	  "unordered": ["arguments.tags"],
//	  "tools":     {"get_weather": {"ignore": ["arguments.units"]}}
//	}
type Config struct {
	// Ignore lists paths removed from both requests before comparing: the
	// value there may differ, be absent on one side, or on both.
	Ignore []string `json:"ignore,omitempty"`
	// Subset lists paths where the live value may hold more than the
	// recorded one: object members the recording lacks are not compared.
	// "" is the whole params (written "subset": true in JSON).
	Subset []string `json:"subset,omitempty"`
	// Regex maps a path to a regular expression (Go syntax) that the live
	// value there must match: a string by its text, any other value by its
	// JSON text. The recorded value is not compared.
	Regex map[string]string `json:"regex,omitempty"`
	// Type maps a path to the JSON type the live value there must have:
	// "string", "number", "boolean", "object", "array", "null", or "any"
	// (present, of any type). The recorded value is not compared.
	Type map[string]string `json:"type,omitempty"`
	// Unordered lists paths of arrays compared as multisets: element order
	// is ignored.
	Unordered []string `json:"unordered,omitempty"`
	// Tools holds more rules for the tools/call requests of one tool,
	// applied with the rules above.
	Tools map[string]*Config `json:"tools,omitempty"`
}

// Types are the type names that Config.Type accepts.
var typeNames = []string{"any", "array", "boolean", "null", "number", "object", "string"}

// ErrConfig is wrapped by every error of a bad matcher configuration.
var ErrConfig = errors.New("bad match configuration")

// ConfigError is an error in a matcher configuration, at a byte offset of
// the JSON text it was parsed from (0 for a Config built in Go).
type ConfigError struct {
	// Offset is the byte offset in the parsed text of the member or value
	// at fault.
	Offset int64
	// Where names the member at fault: "regex[\"arguments.city\"]",
	// "tools.get_weather.ignore[0]".
	Where string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Where == "" {
		return e.Err.Error()
	}
	return e.Where + ": " + e.Err.Error()
}

func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// ParseConfig parses the declarative form of a Config (a "match" member)
// and checks it: unknown members, wrong types, bad paths, bad regular
// expressions and unknown type names are errors of type *ConfigError whose
// Offset points into raw. An empty raw (or null) is an empty Config.
func ParseConfig(raw json.RawMessage) (*Config, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return &Config{}, nil
	}
	return parseConfig(raw, 0, "")
}

type configParser struct {
	data []byte
	base int64 // offset of data in the outermost text
	dec  *json.Decoder
}

func (p *configParser) errAt(off int64, where string, err error) *ConfigError {
	return &ConfigError{Offset: p.base + off, Where: where, Err: err}
}

// next returns the offset where the next token starts.
func (p *configParser) next() int64 {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

func (p *configParser) syntax(err error, where string) *ConfigError {
	off := p.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset - 1
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err, off = errors.New("unexpected end of JSON"), int64(len(p.data))
	}
	off = min(max(off, 0), int64(len(p.data)))
	return p.errAt(off, where, err)
}

func join(where, member string) string {
	if where == "" {
		return member
	}
	return where + "." + member
}

func parseConfig(data []byte, base int64, where string) (*Config, error) {
	p := &configParser{data: data, base: base, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	c := &Config{}
	start := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err, where)
	}
	if t != json.Delim('{') {
		return nil, p.errAt(start, where, fmt.Errorf("want a JSON object, got %s", describe(t)))
	}
	seen := map[string]bool{}
	for p.dec.More() {
		keyOff := p.next()
		t, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err, where)
		}
		key := t.(string)
		if seen[key] {
			return nil, p.errAt(keyOff, join(where, key), errors.New("member given twice"))
		}
		seen[key] = true
		w := join(where, key)
		switch key {
		case "ignore", "unordered":
			paths, err := p.paths(w)
			if err != nil {
				return nil, err
			}
			if key == "ignore" {
				c.Ignore = paths
			} else {
				c.Unordered = paths
			}
		case "subset":
			valOff := p.next()
			if bytes.HasPrefix(data[valOff:], []byte("true")) {
				p.dec.Token()
				c.Subset = []string{""}
				continue
			}
			if bytes.HasPrefix(data[valOff:], []byte("false")) {
				p.dec.Token()
				continue
			}
			paths, err := p.paths(w)
			if err != nil {
				return nil, err
			}
			c.Subset = paths
		case "regex", "type":
			m, err := p.pathMap(w, key)
			if err != nil {
				return nil, err
			}
			if key == "regex" {
				c.Regex = m
			} else {
				c.Type = m
			}
		case "tools":
			tools, err := p.tools(w)
			if err != nil {
				return nil, err
			}
			c.Tools = tools
		default:
			return nil, p.errAt(keyOff, w, fmt.Errorf("unknown member %q (want ignore, subset, regex, type, unordered or tools)", key))
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err, where)
	}
	if off := p.next(); off < int64(len(data)) {
		return nil, p.errAt(off, where, errors.New("text after the configuration object"))
	}
	return c, nil
}

func describe(t json.Token) string {
	switch x := t.(type) {
	case json.Delim:
		if x == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// paths reads an array of path strings (or one string) and checks them.
func (p *configParser) paths(where string) ([]string, error) {
	off := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err, where)
	}
	if s, ok := t.(string); ok {
		if _, err := parsePath(s); err != nil {
			return nil, p.errAt(off, where, err)
		}
		return []string{s}, nil
	}
	if t != json.Delim('[') {
		return nil, p.errAt(off, where, fmt.Errorf("want an array of paths, got %s", describe(t)))
	}
	var out []string
	for i := 0; p.dec.More(); i++ {
		w := fmt.Sprintf("%s[%d]", where, i)
		off := p.next()
		t, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err, w)
		}
		s, ok := t.(string)
		if !ok {
			if d, isDelim := t.(json.Delim); isDelim {
				return nil, p.errAt(off, w, fmt.Errorf("want a path string, got %s", describe(d)))
			}
			return nil, p.errAt(off, w, fmt.Errorf("want a path string, got %s", describe(t)))
		}
		if _, err := parsePath(s); err != nil {
			return nil, p.errAt(off, w, err)
		}
		out = append(out, s)
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err, where)
	}
	return out, nil
}

// pathMap reads an object of path → regex or type name and checks it.
func (p *configParser) pathMap(where, kind string) (map[string]string, error) {
	off := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err, where)
	}
	if t != json.Delim('{') {
		return nil, p.errAt(off, where, fmt.Errorf("want an object of path: %s, got %s", kind, describe(t)))
	}
	out := map[string]string{}
	for p.dec.More() {
		keyOff := p.next()
		t, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err, where)
		}
		path := t.(string)
		w := fmt.Sprintf("%s[%q]", where, path)
		if _, err := parsePath(path); err != nil {
			return nil, p.errAt(keyOff, w, err)
		}
		valOff := p.next()
		t, err = p.dec.Token()
		if err != nil {
			return nil, p.syntax(err, w)
		}
		if d, isDelim := t.(json.Delim); isDelim {
			return nil, p.errAt(valOff, w, fmt.Errorf("want a string, got %s", describe(d)))
		}
		v, ok := t.(string)
		if !ok {
			return nil, p.errAt(valOff, w, fmt.Errorf("want a string, got %s", describe(t)))
		}
		if err := checkRule(kind, v); err != nil {
			return nil, p.errAt(valOff, w, err)
		}
		out[path] = v
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err, where)
	}
	return out, nil
}

func checkRule(kind, v string) error {
	if kind == "regex" {
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Errorf("bad regular expression: %v", err)
		}
		return nil
	}
	if !slices.Contains(typeNames, v) {
		return fmt.Errorf("unknown type %q (want %s)", v, strings.Join(typeNames, ", "))
	}
	return nil
}

// tools reads the object of tool name → Config.
func (p *configParser) tools(where string) (map[string]*Config, error) {
	off := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err, where)
	}
	if t != json.Delim('{') {
		return nil, p.errAt(off, where, fmt.Errorf("want an object of tool name: configuration, got %s", describe(t)))
	}
	out := map[string]*Config{}
	for p.dec.More() {
		t, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err, where)
		}
		name := t.(string)
		valOff := p.next()
		var raw json.RawMessage
		if err := p.dec.Decode(&raw); err != nil {
			return nil, p.syntax(err, join(where, name))
		}
		c, err := parseConfig(raw, p.base+valOff, join(where, name))
		if err != nil {
			return nil, err
		}
		if len(c.Tools) > 0 {
			return nil, p.errAt(valOff, join(where, name), errors.New(`"tools" cannot nest inside "tools"`))
		}
		out[name] = c
	}
	if _, err := p.dec.Token(); err != nil {
		return nil, p.syntax(err, where)
	}
	return out, nil
}

// Check reports the first problem of a Config built in Go, as ParseConfig
// does for the declarative form (with no offsets).
func (c *Config) Check() error {
	if c == nil {
		return nil
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"ignore", c.Ignore}, {"unordered", c.Unordered}, {"subset", c.Subset}} {
		for i, p := range list.paths {
			if p == "" && list.name == "subset" {
				continue
			}
			if _, err := parsePath(p); err != nil {
				return &ConfigError{Where: fmt.Sprintf("%s[%d]", list.name, i), Err: err}
			}
		}
	}
	for _, kind := range []string{"regex", "type"} {
		m := c.Regex
		if kind == "type" {
			m = c.Type
		}
		for _, p := range sortedKeysOf(m) {
			w := fmt.Sprintf("%s[%q]", kind, p)
			if _, err := parsePath(p); err != nil {
				return &ConfigError{Where: w, Err: err}
			}
			if err := checkRule(kind, m[p]); err != nil {
				return &ConfigError{Where: w, Err: err}
			}
		}
	}
	for _, name := range sortedKeysOf(c.Tools) {
		if err := c.Tools[name].Check(); err != nil {
			ce := err.(*ConfigError)
			ce.Where = join("tools."+name, ce.Where)
			return ce
		}
	}
	return nil
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Empty reports whether c loosens nothing.
func (c *Config) Empty() bool {
	return c == nil || (len(c.Ignore) == 0 && len(c.Subset) == 0 && len(c.Regex) == 0 && len(c.Type) == 0 &&
		len(c.Unordered) == 0 && len(c.Tools) == 0)
}

// Merge returns the rules of c and then of more, as one Config: lists are
// joined, and for a path (or tool) given in both, more wins. Neither input
// changes; nil inputs are empty.
func Merge(c *Config, more ...*Config) *Config {
	out := &Config{}
	for _, x := range append([]*Config{c}, more...) {
		if x == nil {
			continue
		}
		out.Ignore = appendNew(out.Ignore, x.Ignore)
		out.Subset = appendNew(out.Subset, x.Subset)
		out.Unordered = appendNew(out.Unordered, x.Unordered)
		out.Regex = mergeMap(out.Regex, x.Regex)
		out.Type = mergeMap(out.Type, x.Type)
		for name, t := range x.Tools {
			if out.Tools == nil {
				out.Tools = map[string]*Config{}
			}
			out.Tools[name] = Merge(out.Tools[name], t)
		}
	}
	return out
}

// ForTool returns the rules that apply to a call of tool: c's own, then
// those of c.Tools[tool], with no Tools of their own.
func (c *Config) ForTool(tool string) *Config {
	if c == nil {
		return &Config{}
	}
	own := *c
	own.Tools = nil
	return Merge(&own, c.Tools[tool])
}

func appendNew(list, more []string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

func mergeMap(m, more map[string]string) map[string]string {
	if len(more) == 0 {
		return m
	}
	out := make(map[string]string, len(m)+len(more))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// UnmarshalJSON parses the declarative form with ParseConfig.
func (c *Config) UnmarshalJSON(data []byte) error {
	parsed, err := ParseConfig(data)
	if err != nil {
		return err
	}
	*c = *parsed
	return nil
}

// MarshalJSON writes the declarative form; a whole-params subset is written
// "subset": true.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	if slices.Equal(c.Subset, []string{""}) {
		return json.Marshal(struct {
			plain
			Subset bool `json:"subset"`
		}{plain(c), true})
	}
	return json.Marshal(plain(c))
}
