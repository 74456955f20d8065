// Package mcphttp holds what every HTTP client of mcpmock (the bridge of the
// tap, the live server of new-episodes and of the drift check) sets on a
// Streamable HTTP request: the standard MCP request headers of 2026-07-28.
package mcphttp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// SetRequestHeaders sets Mcp-Method, Mcp-Name (for tools/call, prompts/get
// and resources/read) and Mcp-Protocol-Version on h for msg (nil for none).
// The version is the one in the message's per-request _meta when it has
// one, else version (the session's, "" for none).
func SetRequestHeaders(h http.Header, msg *jsonrpc.Message, version string) {
	if msg != nil {
		if meta, _ := jsonrpc.Member(msg.Params, "_meta"); meta != nil {
			if v, _ := jsonrpc.Member(meta, "io.modelcontextprotocol/protocolVersion"); v != nil {
				var s string
				if json.Unmarshal(v, &s) == nil && s != "" {
					version = s
				}
			}
		}
		if msg.Method != "" {
			h.Set("Mcp-Method", msg.Method)
		}
		switch msg.Method {
		case "tools/call", "prompts/get", "resources/read":
			for _, key := range []string{"name", "uri"} {
				if v, _ := jsonrpc.Member(msg.Params, key); v != nil {
					var s string
					if json.Unmarshal(v, &s) == nil {
						h.Set("Mcp-Name", HeaderValue(s))
						break
					}
				}
			}
		}
	}
	if version != "" {
		h.Set("Mcp-Protocol-Version", version)
	}
}

// HeaderValue encodes s as the Value Encoding of 2026-07-28 asks: as is if
// it is plain visible ASCII, else =?base64?...?=.
func HeaderValue(s string) string {
	plain := s == strings.TrimSpace(s) && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
