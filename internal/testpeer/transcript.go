package testpeer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Transcript is what a scripted client saw, one [Step] per request, in a form
// that does not depend on the client library: the same session seen through
// the go-sdk client and through the mcp-go client gives equal Transcripts.
type Transcript []Step

// Step is one request of the script and what came back.
type Step struct {
	// Op names the request: "tools/list page N" or
	// `tools/call NAME {"arg":value}` (arguments as compact JSON).
	Op string
	// Result summarizes a successful result; "" when Error is set. For a
	// page of tools/list: the sorted tool names, comma-separated. For
	// tools/call: one item per content block, "; "-separated ("text
	// QUOTED", "image MIME N bytes", "audio MIME N bytes", "resource URI
	// MIME QUOTED-TEXT" or "... N bytes" for a blob, "resource_link URI"),
	// then "isError" for a tool error, then "structured JSON" with the
	// structured content as compact JSON.
	Result string
	// Error is "code N: MESSAGE" for a JSON-RPC error response; "" otherwise.
	Error string
}

// String formats the transcript one step a line, for test failure messages.
func (t Transcript) String() string {
	var b strings.Builder
	for _, s := range t {
		fmt.Fprintf(&b, "%s -> ", s.Op)
		if s.Error != "" {
			fmt.Fprintf(&b, "error %s\n", s.Error)
		} else {
			fmt.Fprintf(&b, "%s\n", s.Result)
		}
	}
	return b.String()
}

// call is one tools/call of the script.
type call struct {
	name string
	args map[string]any
}

// noSuchTool is the name of the tool that the script calls although no server
// has it.
const noSuchTool = "no_such_tool"

// script returns the tools/call requests that follow the tools/list pages.
func script() []call {
	return []call{
		{toolGetWeather, map[string]any{"location": "New York"}},
		{toolGetWeather, map[string]any{"location": rateLimitedLocation}},
		{toolEcho, map[string]any{"text": "héllo 🌍"}},
		{toolImage, map[string]any{}},
		{toolAudio, map[string]any{}},
		{toolResource, map[string]any{}},
		{toolAdd, map[string]any{"a": 2, "b": 40}},
		{toolGetWeather, map[string]any{"location": "New York"}},
		{noSuchTool, map[string]any{}},
	}
}

// maxPages bounds the tools/list pages a client follows, against a server
// whose cursors never end.
const maxPages = 100

func (c call) op() string {
	args, err := json.Marshal(c.args)
	if err != nil {
		panic(err) // the script holds only JSON values
	}
	return "tools/call " + c.name + " " + string(args)
}

func pageOp(n int) string { return "tools/list page " + strconv.Itoa(n) }

func pageResult(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// resultBuilder accumulates the summary of a tools/call result.
type resultBuilder []string

func (b *resultBuilder) text(s string) { *b = append(*b, "text "+strconv.Quote(s)) }
func (b *resultBuilder) media(kind, mime string, n int) {
	*b = append(*b, fmt.Sprintf("%s %s %d bytes", kind, mime, n))
}
func (b *resultBuilder) resourceText(uri, mime, text string) {
	*b = append(*b, fmt.Sprintf("resource %s %s %s", uri, mime, strconv.Quote(text)))
}
func (b *resultBuilder) resourceBlob(uri, mime string, n int) {
	*b = append(*b, fmt.Sprintf("resource %s %s %d bytes", uri, mime, n))
}
func (b *resultBuilder) link(uri string)   { *b = append(*b, "resource_link "+uri) }
func (b *resultBuilder) other(kind string) { *b = append(*b, "unknown content "+kind) }
func (b *resultBuilder) isError(isErr bool) {
	if isErr {
		*b = append(*b, "isError")
	}
}

// structured adds v, the structured content decoded as JSON, re-encoded as
// compact JSON with sorted keys.
func (b *resultBuilder) structured(v any) {
	if v == nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		*b = append(*b, "structured (unencodable: "+err.Error()+")")
		return
	}
	*b = append(*b, "structured "+string(data))
}

func (b resultBuilder) String() string { return strings.Join(b, "; ") }

func protocolError(code int64, message string) string {
	return fmt.Sprintf("code %d: %s", code, message)
}
