package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// The HTTP headers of the MCP transports.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMethod carries a request's method (2026-07-28).
	HeaderMethod = "Mcp-Method"
	// HeaderName carries the member of a request's params that NameMember
	// names, in the Value Encoding (2026-07-28).
	HeaderName = "Mcp-Name"
	// HeaderParamPrefix starts the header of a tool argument that the tool's
	// input schema marks with x-mcp-header (2026-07-28).
	HeaderParamPrefix = "Mcp-Param-"
	// HeaderLastEventID resumes an SSE stream after the event it names.
	HeaderLastEventID = "Last-Event-ID"
)

// The sentinel around a Base64-encoded header value.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// NameMember returns the member of a request's params that the Mcp-Name
// header carries for method: "name" for tools/call and prompts/get, "uri"
// for resources/read, "" for a method without the header.
func NameMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// EncodeValue encodes s for an Mcp-Name or Mcp-Param-* header as the Value
// Encoding of 2026-07-28 asks: as is if it is visible ASCII and spaces with
// no space at either end, else =?base64?...?= (as also for a plain value
// that looks like that sentinel).
func EncodeValue(s string) string {
	plain := s == strings.TrimSpace(s) && !(strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix))
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

// DecodeValue decodes a header value of the Value Encoding: the Base64
// sentinel form, or a plain value. It reports false for invalid Base64 and
// for a plain value with a character a header value may not hold.
func DecodeValue(v string) (string, bool) {
	if strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix) && len(v) >= len(base64Prefix+base64Suffix) {
		b, err := base64.StdEncoding.DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	for _, c := range []byte(v) {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// SetRequestHeaders sets the standard request headers of 2026-07-28 on h
// for msg (nil for none): Mcp-Method, Mcp-Name (see NameMember) and
// Mcp-Protocol-Version. The version is the one in the message's
// per-request _meta when it has one, else version (the session's, "" for
// none).
func SetRequestHeaders(h http.Header, msg *jsonrpc.Message, version string) {
	if msg != nil {
		if v := MetaVersion(msg.Params); v != "" {
			version = v
		}
		if msg.Method != "" {
			h.Set(HeaderMethod, msg.Method)
		}
		if member := NameMember(msg.Method); member != "" {
			if v, _ := jsonrpc.Member(msg.Params, member); v != nil {
				var s string
				if json.Unmarshal(v, &s) == nil {
					h.Set(HeaderName, EncodeValue(s))
				}
			}
		}
	}
	if version != "" {
		h.Set(HeaderProtocolVersion, version)
	}
}
