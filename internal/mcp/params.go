package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// The accessors below read one member of a request's params. Each looks
// for its key in the raw bytes first, so that the common request without
// it is answered without decoding.

// MetaVersion returns params._meta[MetaProtocolVersion], "" for none.
func MetaVersion(params json.RawMessage) string {
	return ReadParams(params).ProtocolVersion()
}

// stringValue is the JSON string raw decoded ("" if it is none), without
// the decoder for the common string with no escape in it: the protocol
// version is read from every request of the 2026-07-28 era.
func stringValue(raw json.RawMessage) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && bytes.IndexByte(raw[1:n-1], '"') < 0 {
		switch v := raw[1 : n-1]; string(v) { // a known version costs no allocation
		case Version20241105:
			return Version20241105
		case Version20250326:
			return Version20250326
		case Version20250618:
			return Version20250618
		case Version20251125:
			return Version20251125
		case Version20260728:
			return Version20260728
		default:
			return string(v)
		}
	}
	var v string
	json.Unmarshal(raw, &v)
	return v
}

// ProgressToken returns params._meta.progressToken as JSON, nil for none.
func ProgressToken(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || !bytes.Contains(params, []byte(`"progressToken"`)) {
		return nil
	}
	meta, err := jsonrpc.Member(params, "_meta")
	if err != nil || meta == nil {
		return nil
	}
	tok, _ := jsonrpc.Member(meta, "progressToken")
	return tok
}

// ToolName returns the name of a tools/call's params, and whether it is a
// string.
func ToolName(params json.RawMessage) (string, bool) {
	raw, err := jsonrpc.Member(params, "name")
	if err != nil || raw == nil {
		return "", false
	}
	return DecodeString(raw)
}

// DecodeString is the string the JSON value raw holds, as encoding/json
// decodes it into a string (null is ""); ok is false for nil or a value of
// another type. raw is valid JSON (a span of a parsed message); a string
// without escapes is not given to the decoder.
func DecodeString(raw json.RawMessage) (string, bool) { return decodeString(raw, jsonrpc.Unquote) }

// DecodeStringView is DecodeString without a copy of a string without
// escapes: the result shares raw's bytes, and is valid while they are (a
// released POST's body is read into again).
func DecodeStringView(raw json.RawMessage) (string, bool) {
	return decodeString(raw, jsonrpc.UnquoteView)
}

func decodeString(raw json.RawMessage, unquote func([]byte) (string, bool)) (string, bool) {
	if raw == nil {
		return "", false
	}
	if s, ok := unquote(raw); ok {
		return s, true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// Cursor returns the cursor of a list request's params, "" for none.
func Cursor(params json.RawMessage) string {
	if len(params) == 0 || params[0] != '{' {
		return ""
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	return p.Cursor
}

// RequestState returns the requestState of a request's params and whether
// the request is the retry of a multi round-trip request (2026-07-28): it
// carries requestState or inputResponses.
func RequestState(params json.RawMessage) (string, bool) {
	return ReadParams(params).Retry()
}
