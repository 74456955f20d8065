// Package matcher decides whether a live request matches a recorded one, and
// explains why not when it does not.
//
// A Matcher is a pure function of a recorded and a live request. The default
// matcher (Default) compares the method and the params as JSON values after
// dropping what changes from run to run (the 2026 per-request _meta keys, the
// progress token, trace context), compares tools/call by tool name and
// arguments and tools/list by cursor, and lets the handshake (initialize,
// server/discover) match whatever client sends it:
//
//	m := matcher.Default()
//	r := m.Match(matcher.Request{Method: "tools/call", Params: rec},
//	             matcher.Request{Method: "tools/call", Params: live})
//	if !r.Match { fmt.Println(r.Diff) }
//
// A Config loosens the comparison at gjson paths of the params: ignore a
// value, accept a live superset, a regular expression, a type, an array in
// any order, per tool. It is written as JSON in a cassette's "match" member
// (ParseConfig, CheckCassette) or built in Go, and WithConfig lays it over
// any Matcher:
//
//	m, err := matcher.WithConfig(nil, &matcher.Config{Ignore: []string{"arguments.timestamp"}})
//
// Func, All and MethodAndTool build matchers from Go functions and parts.
package matcher

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Request is the part of a JSON-RPC request that matching looks at.
type Request struct {
	Method string
	Params json.RawMessage
}

// Tool returns the tool name of a tools/call request ("" for other methods or
// when the params have no name).
func (r Request) Tool() string {
	raw := r.toolRaw()
	if raw == nil {
		return ""
	}
	name, _ := jsonrpc.Unquote(raw)
	return name
}

// toolRaw is the JSON string of a tools/call's name, nil for none.
func (r Request) toolRaw() []byte {
	if r.Method != "tools/call" || len(r.Params) == 0 {
		return nil
	}
	raw, err := jsonrpc.Member(r.Params, "name")
	if err != nil || len(raw) < 2 || raw[0] != '"' {
		return nil
	}
	return raw
}

// Result is the outcome of one comparison.
type Result struct {
	// Match reports whether the live request matches the recorded one.
	Match bool
	// Exact reports a match that needed no loosening rule (ignore paths,
	// placeholders...): such matches are preferred over looser ones.
	Exact bool
	// Differences lists, for a miss, each place where the two differ.
	Differences []Difference
	// Diff is a cmp.Diff-style rendering of the compared values,
	// (-recorded +live), for a miss.
	Diff string
}

// Distance is a rough measure of how far a miss is from matching, used to
// rank near misses: 0 for a match.
func (r Result) Distance() int {
	if r.Match {
		return 0
	}
	if len(r.Differences) == 0 {
		return 1
	}
	n := 0
	for _, d := range r.Differences {
		n += d.weight()
	}
	return n
}

// Difference is one place where a live request differs from a recorded one.
type Difference struct {
	// Path is the gjson path of the value inside params ("" for the method).
	Path string
	// Recorded and Live are the two values as compact JSON ("" when absent).
	Recorded, Live string
	// Rule, when set, is the configured rule that the live value broke
	// ("regex ^New", "type number"); Recorded is then empty.
	Rule string
}

func (d Difference) weight() int {
	if d.Path == "" {
		return 1000 // another method
	}
	if d.Path == "name" {
		return 100 // another tool
	}
	return 1
}

func (d Difference) String() string {
	path := d.Path
	if path == "" {
		path = "method"
	}
	switch {
	case d.Rule != "" && d.Live == "":
		return fmt.Sprintf("%s: live has none, want %s", path, d.Rule)
	case d.Rule != "":
		return fmt.Sprintf("%s: live %s does not match %s", path, d.Live, d.Rule)
	case d.Recorded == "":
		return fmt.Sprintf("%s: not recorded, live has %s", path, d.Live)
	case d.Live == "":
		return fmt.Sprintf("%s: recorded %s, live has none", path, d.Recorded)
	}
	return fmt.Sprintf("%s: recorded %s, live %s", path, d.Recorded, d.Live)
}

// Matcher compares a recorded request with a live one. Implementations are
// pure: they never change their inputs, and they say why they did not match.
type Matcher interface {
	Match(recorded, live Request) Result
}

// Func adapts a function to a Matcher.
type Func func(recorded, live Request) Result

// Match calls f.
func (f Func) Match(recorded, live Request) Result { return f(recorded, live) }

// Keyer is implemented by matchers whose verdict is equality of a canonical
// key: Match(a, b).Match == (Key(a) == Key(b)). A replay engine may then find
// matches with a map instead of trying every recorded request.
type Keyer interface {
	Key(r Request) string
}

// AppendIndexKey appends to dst the key under which an engine files r for
// m: IndexKey for an Indexer, Key for a Keyer. ok is false when m gives r no
// key (an engine must then try r one by one). The built-in matchers write
// the key straight into dst, so that a lookup with a reused buffer
// allocates nothing.
func AppendIndexKey(dst []byte, m Matcher, r Request) (key []byte, ok bool) {
	return appendIndexKey(dst, m, r, false)
}

// AppendIndexKeyValid is AppendIndexKey for a request whose params are
// known to be valid JSON, as those of a parsed message are: the built-in
// matchers do not check them again. The key of params that are not valid
// JSON is then undefined.
func AppendIndexKeyValid(dst []byte, m Matcher, r Request) (key []byte, ok bool) {
	return appendIndexKey(dst, m, r, true)
}

func appendIndexKey(dst []byte, m Matcher, r Request, valid bool) ([]byte, bool) {
	switch x := m.(type) {
	case keyAppender:
		return x.appendIndexKey(dst, r, valid)
	case Indexer:
		k, ok := x.IndexKey(r)
		return append(dst, k...), ok
	case Keyer:
		return append(dst, x.Key(r)...), true
	}
	return dst, false
}

// keyAppender is AppendIndexKey for the built-in matchers; valid says that
// r's params are known to be valid JSON.
type keyAppender interface {
	appendIndexKey(dst []byte, r Request, valid bool) ([]byte, bool)
}

// KeyDecider is implemented by matchers whose index key, for some recorded
// requests, decides the match on its own: a live request with an equal key
// matches exactly, so an engine need not call Match. (A Keyer decides for
// every request.)
type KeyDecider interface {
	KeyDecides(recorded Request) bool
	// ExactKey keys a request for exactness: a decided match is Exact
	// (needed no loosening rule) when the exact keys are equal too. It is
	// "" when the index key is exact already.
	ExactKey(r Request) string
}

// Handshake reports whether a method is a handshake that the default matcher
// accepts from any client.
func Handshake(method string) bool {
	return mcp.Handshake(method)
}

// volatileMeta reports whether a _meta key changes from run to run and is
// dropped before comparing: the progress token, W3C trace context and the
// per-request keys of 2026-07-28 (io.modelcontextprotocol/...).
func volatileMeta(key string) bool {
	switch key {
	case "progressToken", "traceparent", "tracestate", "baggage":
		return true
	}
	return strings.HasPrefix(key, mcp.MetaPrefix)
}
