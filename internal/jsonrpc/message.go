// Package jsonrpc holds the JSON-RPC 2.0 wire details that mcpmock shares
// between its tap and its replay server: messages and their ids, error codes,
// batches, newline-delimited framing for stdio and event framing for SSE.
//
// A message is kept as the bytes that arrived. [Parse] looks inside once and
// records what the rest of mcpmock needs (kind, id, method, params, result,
// error) as sub-slices of those bytes, so that forwarding and replaying never
// re-encode what they did not change.
//
//	msg, err := jsonrpc.Parse(line)
//	if err != nil { ... answer -32700 ... }
//	if msg.Kind() == jsonrpc.KindRequest { ... msg.Method, msg.ID ... }
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unsafe"
)

// JSON-RPC 2.0 error codes, and the ones MCP adds.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Kind says what a message is.
type Kind int

// The kinds of message. A message with a method and an id is a request, one
// with a method and no id a notification, one with a result or an error a
// response.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// ID is a JSON-RPC id kept as its compact JSON text: `1` and `"1"` are
// different ids, as the specification says. The zero ID means "no id".
type ID string

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id == "" }

// Raw returns the id as JSON; an absent id is written as null.
func (id ID) Raw() json.RawMessage {
	if id == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(id)
}

// IntID returns the id for a number.
func IntID(n int64) ID { return ID(strconv.FormatInt(n, 10)) }

// Message is one parsed JSON-RPC message. Raw holds the bytes as they
// arrived; the other fields are views into it (Params, Result and Error are
// raw JSON, nil when absent).
type Message struct {
	Raw     json.RawMessage
	ID      ID
	Method  string
	Params  json.RawMessage
	Result  json.RawMessage
	Error   *Error
	hasID   bool
	version string
}

// Kind classifies the message.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && m.hasID:
		return KindRequest
	case m.Method != "":
		return KindNotification
	case m.Result != nil || m.Error != nil:
		return KindResponse
	}
	return KindInvalid
}

// wire is what parse found in a message, before it is checked.
type wire struct {
	hasMethod          bool
	ID, Params, Result json.RawMessage
	Error              json.RawMessage
	// view makes the message's id share the data's memory (ParseViewInto).
	view bool
}

// ErrNotObject is returned by Parse for JSON that is not an object.
var ErrNotObject = errors.New("jsonrpc: message is not a JSON object")

// Parse decodes one message (not a batch). A syntax error is reported as a
// *json.SyntaxError wrapped in the returned error; a message that is JSON but
// not a valid JSON-RPC message returns the Message (as far as it could be
// read) together with an *Error whose code is CodeInvalidRequest.
func Parse(data []byte) (*Message, error) {
	m := new(Message)
	err := ParseInto(m, data)
	if err != nil && m.Raw == nil {
		return nil, err // not JSON, or not an object
	}
	return m, err
}

// ParseInto is Parse into a Message of the caller's, one it may reuse for
// the next message: what Parse would return is in m, and where Parse
// returns no message (data is not JSON, or not an object), m is left empty,
// its Raw nil.
func ParseInto(m *Message, data []byte) error {
	return parseInto(m, data, false)
}

// ParseViewInto is ParseInto for a message that is used only while data is
// unchanged (the live log's parse of an answer whose line it writes at
// once): the message's id is a view of data, not a string of its own.
func ParseViewInto(m *Message, data []byte) error {
	return parseInto(m, data, true)
}

func parseInto(m *Message, data []byte, view bool) error {
	*m = Message{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if !Valid(data) {
			return fmt.Errorf("jsonrpc: parse: %w", syntaxError(data))
		}
		return ErrNotObject
	}
	// One pass checks the syntax and reads the members; what they say is
	// judged once the whole is known to be JSON, as if checked first.
	m.Raw = data
	w := wire{view: view}
	var bad error
	if !eachMemberValid(data, func(quoted, value []byte) {
		if bad == nil {
			bad = m.member(&w, quoted, value)
		}
	}) {
		*m = Message{}
		return fmt.Errorf("jsonrpc: parse: %w", syntaxError(data))
	}
	return m.finish(w, bad)
}

// ParseValid is Parse for data already known to be valid JSON (read from a
// cassette that decoded): it skips the validity scan.
func ParseValid(data []byte) (*Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, ErrNotObject
	}
	m := new(Message)
	return m, m.parse(data)
}

// ParseValidInto is ParseValid into a Message of the caller's (one it may
// keep on its stack, or reuse).
func ParseValidInto(m *Message, data []byte) error {
	*m = Message{}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ErrNotObject
	}
	return m.parse(data)
}

// CheckValid is ParseValid for a message that is only checked, not kept:
// it returns the message's kind and the error ParseValid would return, and
// allocates nothing for a valid message without an error member.
func CheckValid(data []byte) (Kind, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return KindInvalid, ErrNotObject
	}
	var m Message
	err := m.parse(data)
	return m.Kind(), err
}

// parse fills m from the JSON object data (trimmed, valid JSON).
func (m *Message) parse(data []byte) error {
	m.Raw = data
	var w wire
	err := eachMemberRaw(data, func(quoted, value []byte) error { return m.member(&w, quoted, value) })
	return m.finish(w, err)
}

// member reads one member of the message into m and w.
func (m *Message) member(w *wire, quoted, value []byte) error {
	// A name as written, quotes and all, is the name when it has no
	// escape: the switch compares it without a lookup or a copy.
	name := quoted
	if bytes.IndexByte(quoted, '\\') >= 0 {
		s, ok := unquote(quoted)
		if !ok {
			return errors.New("bad member name")
		}
		name = strconv.AppendQuote(nil, s)
	}
	switch string(name) {
	case `"jsonrpc"`:
		s, ok := unquoteName(value)
		if !ok {
			return errors.New(`"jsonrpc" must be a string`)
		}
		m.version = s
	case `"id"`:
		w.ID = value
	case `"method"`:
		s, ok := unquoteName(value)
		if !ok {
			return errors.New(`"method" must be a string`)
		}
		m.Method, w.hasMethod = s, true
	case `"params"`:
		w.Params = value
	case `"result"`:
		w.Result = value
	case `"error"`:
		w.Error = value
	}
	return nil
}

// finish fills m from what its members gave (bad: the first that could
// not be read) and checks it.
func (m *Message) finish(w wire, bad error) error {
	if bad != nil {
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + bad.Error()}
	}
	m.Params, m.Result = w.Params, w.Result
	if w.ID != nil {
		m.hasID = true
		if w.view {
			m.ID = ID(unsafe.String(&w.ID[0], len(w.ID)))
		} else {
			m.ID = ID(w.ID)
		}
	}
	if w.Error != nil && string(w.Error) != "null" {
		var e Error
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: error member: " + err.Error()}
		}
		m.Error = &e
	}
	return m.validate(w)
}

// unquoteName is unquote for member names and for the "jsonrpc" and
// "method" members: the common ones (names of JSON-RPC, of cassettes and of
// MCP params; the version; the methods of MCP) are not copied, one string
// each for the whole process.
func unquoteName(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if s, ok := names[string(raw[1:n-1])]; ok {
			return s, true
		}
	}
	return unquote(raw)
}

// names are the strings unquoteName does not copy.
var names = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"2.0",
		"initialize", "server/discover", "ping", "notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message", "logging/setLevel",
		"tools/list", "tools/call", "notifications/tools/list_changed",
		"prompts/list", "prompts/get", "notifications/prompts/list_changed",
		"resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
		"resources/unsubscribe", "notifications/resources/list_changed", "notifications/resources/updated",
		"completion/complete", "sampling/createMessage", "elicitation/create", "notifications/elicitation/complete",
		"roots/list", "notifications/roots/list_changed", "subscriptions/listen",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status",
		// member names
		"jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data",
		"from", "atMs", "request", "notification", "raw", "batch", "exchange", "response", "match", "times", "http",
		"when", "fault", "status", "form", "stream", "eventIds", "requestHeaders", "responseHeaders",
		"name", "arguments", "_meta", "progressToken", "cursor", "nextCursor", "content", "type", "text",
		"isError", "structuredContent", "uri", "mimeType", "tools", "resources", "prompts", "description",
		"inputSchema", "outputSchema", "annotations", "title", "properties", "required", "protocolVersion",
		"capabilities", "clientInfo", "serverInfo", "version", "resultType", "requestState", "inputResponses"} {
		m[s] = s
	}
	return m
}()

// eachMember calls f with each member of the valid JSON object data, in
// order; the values are sub-slices of data.
func eachMember(data []byte, f func(key string, value []byte) error) error {
	return eachMemberRaw(data, func(quoted, value []byte) error {
		key, ok := unquoteName(quoted)
		if !ok {
			return errors.New("bad member name")
		}
		return f(key, value)
	})
}

// eachMemberRaw is eachMember with each key as written (a JSON string,
// quotes included), a sub-slice of data.
func eachMemberRaw(data []byte, f func(quoted, value []byte) error) error {
	i := skipSpace(data, 1)
	for i < len(data) && data[i] != '}' {
		ke, err := skipValue(data, i)
		if err != nil {
			return err
		}
		if data[i] != '"' {
			return errors.New("bad member name")
		}
		quoted := data[i:ke]
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return errors.New("expected ':' in object")
		}
		vs := skipSpace(data, i+1)
		ve, err := skipValue(data, vs)
		if err != nil {
			return err
		}
		if err := f(quoted, data[vs:ve]); err != nil {
			return err
		}
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return nil
}

// unquote returns the string a JSON string literal holds.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func syntaxError(data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return errors.New("invalid JSON")
	}
	return err
}

// validate checks the rules of JSON-RPC 2.0 that a receiver must enforce.
func (m *Message) validate(w wire) error {
	invalid := func(why string) error {
		return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + why}
	}
	if m.version != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if m.hasID {
		switch c := m.ID[0]; {
		case c == '"', c == '-', c >= '0' && c <= '9':
		case string(m.ID) == "null":
			if m.Method != "" {
				return invalid("a request id must be a string or a number")
			}
		default:
			return invalid("id must be a string or a number")
		}
	}
	if w.hasMethod {
		if m.Method == "" {
			return invalid(`"method" must not be empty`)
		}
		if m.Result != nil || m.Error != nil {
			return invalid("a request carries no result or error")
		}
		if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return invalid(`"params" must be an object or an array`)
		}
		return nil
	}
	if m.Result == nil && m.Error == nil {
		return invalid(`a message needs "method", "result" or "error"`)
	}
	if m.Result != nil && m.Error != nil {
		return invalid(`a response has "result" or "error", not both`)
	}
	if !m.hasID {
		return invalid("a response needs an id")
	}
	return nil
}

// Error is a JSON-RPC error object. It implements error.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Response encodes a success response with the given id and raw result,
// without re-encoding the result.
func Response(id ID, result json.RawMessage) []byte {
	b := make([]byte, 0, len(result)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// ErrorResponse encodes an error response. An absent id is written as null,
// as JSON-RPC asks when the request's id could not be read.
func ErrorResponse(id ID, e *Error) []byte {
	ej, err := json.Marshal(e)
	if err != nil {
		panic(err) // an Error always encodes
	}
	b := make([]byte, 0, len(ej)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"error":`...)
	b = append(b, ej...)
	return append(b, '}')
}

// Request encodes a request (or, with a zero id, a notification) with raw
// params; nil params are left out.
func Request(id ID, method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method)
	b := make([]byte, 0, len(params)+len(m)+48)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = append(b, m...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// WithID returns a copy of a raw message whose top-level "id" member is
// replaced by id (or added, when absent). The rest of the message keeps its
// bytes.
func WithID(raw json.RawMessage, id ID) (json.RawMessage, error) {
	return AppendWithID(nil, raw, id)
}

// AppendWithID appends WithID(raw, id) to dst: with room in dst, it
// allocates nothing when raw has an "id" to replace.
func AppendWithID(dst []byte, raw json.RawMessage, id ID) ([]byte, error) {
	start, end, ok := IDSpan(raw)
	return AppendWithIDAt(dst, raw, start, end, ok, id)
}

// IDSpan finds the value of raw's "id" member (the last, if it has
// several): raw[start:end]. ok is false when raw is not an object or has
// no id. A caller that sends raw under many ids finds its span once.
func IDSpan(raw json.RawMessage) (start, end int, ok bool) {
	start, end, _, err := memberSpan(raw, "id")
	return start, end, err == nil && start >= 0
}

// AppendWithIDAt is AppendWithID with raw's id span known (IDSpan).
func AppendWithIDAt(dst []byte, raw json.RawMessage, start, end int, ok bool, id ID) ([]byte, error) {
	if !ok {
		out, err := replaceMember(raw, "id", id.Raw())
		if dst == nil {
			return out, err
		}
		return append(dst, out...), err
	}
	text := string(id) // the id's text, not copied first
	if id == "" {
		text = "null"
	}
	dst = slices.Grow(dst, len(raw)-(end-start)+len(text))
	dst = append(dst, raw[:start]...)
	dst = append(dst, text...)
	return append(dst, raw[end:]...), nil
}
