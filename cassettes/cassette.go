// Package cassettes is the cassette file format of mcpmock: its types, load
// and save, and its checks.
//
// A cassette is one JSON file holding one recorded MCP session: every message
// that passed the tap, in order, with its direction and time offset. Client
// requests are grouped with what belongs to them (the server's notifications
// and requests sent while the request was pending, the client's replies to
// those, and the response), so that a person reading the file sees each call
// as one unit and can edit it by hand:
//
//	{
//	  "version": 1,
//	  "meta": {"transport": "stdio", "server": ["weather-server"]},
//	  "interactions": [
//	    {
//	      "from": "client",
//	      "atMs": 1.5,
//	      "request": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
//	                  "params": {"name": "get_weather", "arguments": {"location": "New York"}}},
//	      "response": {"from": "server", "atMs": 3.1,
//	                   "message": {"jsonrpc": "2.0", "id": 2, "result": {...}}}
//	    }
//	  ]
//	}
//
// Load refuses a file of another format version and reports errors with the
// file, line and column; Save writes atomically (a temporary file renamed over
// the old one), so a reader never sees half a cassette.
package cassettes

import (
	"encoding/json"

	"github.com/mcpmock/mcpmock/internal/cassettefile"
)

// Version is the cassette format version that this package reads and writes.
const Version = 1

// Cassette is one recorded session. The zero value is an empty cassette of
// no version; New returns one ready to fill.
type Cassette struct {
	// Schema is the URL of the format's JSON Schema (the "$schema" member,
	// for editors); Encode writes SchemaURL when it is empty.
	Schema string `json:"$schema,omitempty"`
	// Version is the format version; Load refuses any other than Version.
	Version int `json:"version"`
	// Meta describes where and how the session was recorded.
	Meta Meta `json:"meta"`
	// Match configures request matching for the whole cassette, in the
	// declarative syntax of package matcher; nil means the default matcher.
	Match json.RawMessage `json:"match,omitempty"`
	// Replay holds replay settings kept with the cassette; nil means the
	// defaults (command-line flags and Go options override them).
	Replay *Replay `json:"replay,omitempty"`
	// Interactions are the recorded exchanges, in the order their first
	// message passed the tap.
	Interactions []Interaction `json:"interactions"`
	// Warnings are what Load and Parse changed in an old cassette (they
	// drop transport echoes that an older tap recorded as messages), for
	// the caller to show; never saved.
	Warnings []string `json:"-"`
}

// Replay is the "replay" member of a cassette: how replay serves it.
type Replay struct {
	// PageSize, when positive, re-pages the recorded lists (tools/list,
	// resources/list, resources/templates/list, prompts/list) into pages of
	// this many items with opaque cursors.
	PageSize int `json:"pageSize,omitempty"`
}

// New returns an empty cassette of the current version.
func New() *Cassette {
	return &Cassette{Version: Version, Interactions: []Interaction{}}
}

// Meta describes a recording. Every field is informational: replay does not
// depend on it.
type Meta struct {
	// RecordedBy names the program that wrote the cassette.
	RecordedBy string `json:"recordedBy,omitempty"`
	// RecordedAt is the start of the recording (RFC 3339).
	RecordedAt string `json:"recordedAt,omitempty"`
	// Transport is the client-facing transport while recording: "stdio",
	// "streamable-http" or "sse".
	Transport string `json:"transport,omitempty"`
	// Server is the server that was recorded: its command line, or its URL.
	Server []string `json:"server,omitempty"`
	// ServerInfo is the recorded server's name and version, as it gave them
	// in its answer to initialize (or in the _meta of server/discover).
	ServerInfo *ServerInfo `json:"serverInfo,omitempty"`
	// Note is free text for people.
	Note string `json:"note,omitempty"`
}

// Direction says who sent a message.
type Direction string

// The two directions.
const (
	FromClient Direction = "client"
	FromServer Direction = "server"
)

// Interaction is one unit of a session. Exactly one of Request, Notification
// and Raw is set:
//
//   - Request: a request sent by From (a client request, or a server-to-client
//     request that belonged to no client request), then Exchange, the messages
//     that passed while it was pending and belong to it, then Response, the
//     answer of the other side (nil when none came).
//   - Notification: a notification sent by From outside any request (a client's
//     notifications/initialized; a server's notifications/tools/list_changed).
//   - Raw: a line from From that was not JSON-RPC, kept as text.
type Interaction struct {
	From         Direction       `json:"from"`
	AtMs         Millis          `json:"atMs"`
	Request      json.RawMessage `json:"request,omitempty"`
	Notification json.RawMessage `json:"notification,omitempty"`
	Raw          *string         `json:"raw,omitempty"`
	// Batch is a number shared by the messages that arrived in one JSON-RPC
	// batch (2025-03-26); 0 for a message sent alone.
	Batch int `json:"batch,omitempty"`
	// BeforeResponse marks a server message of its own (a notification,
	// a request or a raw line) that came while the client request recorded
	// last before it still awaited its response: replay sends it before
	// that response, where without it (or without a time offset that
	// says so) it follows the response. AfterExchange is how many of that
	// request's exchange messages had come before it, so that replay
	// keeps its place among them too.
	BeforeResponse bool      `json:"beforeResponse,omitempty"`
	AfterExchange  int       `json:"afterExchange,omitempty"`
	Exchange       []Message `json:"exchange,omitempty"`
	Response       *Message  `json:"response,omitempty"`
	// Match configures matching for this interaction (package matcher).
	Match json.RawMessage `json:"match,omitempty"`
	// Times limits how often the interaction answers in replay: 0 means the
	// default repeat rule (first unused, then the last one again), n > 0 at
	// most n times, -1 always.
	Times int `json:"times,omitempty"`
	// HTTP describes how the interaction travelled over HTTP; nil on stdio.
	HTTP *HTTP `json:"http,omitempty"`
	// When and Fault script the interaction (see When and Fault): it is
	// tried before recorded ones, on the calls When selects, and its answer
	// (its own response, or the recording's) carries the Fault.
	When  *When  `json:"when,omitempty"`
	Fault *Fault `json:"fault,omitempty"`
}

// HTTP is what an interaction looked like on Streamable HTTP (or the HTTP+SSE
// transport of 2024-11-05). Replay uses it to answer in the recorded form;
// a cassette without it replays over HTTP all the same.
type HTTP struct {
	// URL is the path and query of the client's request ("/mcp",
	// "/message?sessionId=[REDACTED]"), secret-looking query parameters
	// redacted; recorded by the HTTP tap.
	URL string `json:"url,omitempty"`
	// Status is the HTTP status of the response to the request's POST
	// (200, 202, or an error status).
	Status int `json:"status,omitempty"`
	// Form is how the response came: "json" (an application/json body),
	// "sse" (a text/event-stream), or "none" (no body).
	Form string `json:"form,omitempty"`
	// Stream is "get" for a message that came on the GET stream, "listen"
	// for one on a subscriptions/listen stream; "" for a POST's response.
	Stream string `json:"stream,omitempty"`
	// EventIDs are the SSE event ids of the exchange and the response, in
	// order.
	EventIDs []string `json:"eventIds,omitempty"`
	// RequestHeaders and ResponseHeaders are the headers that matter
	// (Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Content-Type,
	// Retry-After, WWW-Authenticate...), with secrets redacted.
	RequestHeaders  map[string]string `json:"requestHeaders,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// Body is a response body that is not JSON-RPC (the text of a 4xx).
	Body string `json:"body,omitempty"`
}

// Message is one message inside an interaction: a JSON-RPC message, or a raw
// line that did not parse.
type Message struct {
	From    Direction       `json:"from"`
	AtMs    Millis          `json:"atMs"`
	Message json.RawMessage `json:"message,omitempty"`
	Raw     *string         `json:"raw,omitempty"`
	// Batch, when not 0, numbers the JSON-RPC batch (2025-03-26) the
	// message arrived in: messages of one interaction, or of interactions
	// that follow each other, with the same number came as one array
	// (numbered as Interaction.Batch, which numbers client batches).
	Batch int `json:"batch,omitempty"`
}

// Kind says which of an interaction's forms is set.
func (in *Interaction) Kind() string {
	switch {
	case in.Request != nil:
		return "request"
	case in.Notification != nil:
		return "notification"
	case in.Raw != nil:
		return "raw"
	}
	return "empty"
}

// Completed reports whether the interaction is a finished exchange: a
// request with its response, or a notification. A line that was not
// JSON-RPC is not one. A recording writes no file until one interaction
// has completed.
func (in *Interaction) Completed() bool {
	return (in.Request != nil && in.Response != nil) || in.Notification != nil
}

// Millis is a time offset from the start of the recording, in milliseconds,
// written with at most three decimals (microseconds).
type Millis float64

// MarshalJSON writes the offset rounded to the microsecond.
func (m Millis) MarshalJSON() ([]byte, error) {
	return m.appendJSON(nil), nil
}

// appendJSON appends m as MarshalJSON writes it.
func (m Millis) appendJSON(dst []byte) []byte {
	return cassettefile.AppendMillis(dst, float64(m))
}
