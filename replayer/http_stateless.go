package replayer

import (
	"fmt"
	"net/http"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// serveStateless answers a POST of the 2026-07-28 era: one message, no
// session, the request metadata headers checked against the body as a real
// server checks them; free is answer's.
func (h *HTTPHandler) serveStateless(w http.ResponseWriter, r *http.Request, msgs []incoming, batch bool) (free bool) {
	if batch {
		http.Error(w, "Bad Request: JSON-RPC batches are not supported in 2025-06-18 and later", http.StatusBadRequest)
		return false
	}
	msg, p := msgs[0].msg, msgs[0].p
	if msg.Kind() == jsonrpc.KindRequest {
		status, code, text, data := checkHeaders(r.Header, msg, p)
		if status == 0 && msg.Method == "tools/call" {
			// http_params.go: the Mcp-Param-* headers of the tool.
			if name, ok := mcp.DecodeStringView(p.Name); ok {
				if text = checkParamHeaders(r.Header, msg.Params, h.params.of(h.e.cassette, name)); text != "" {
					status, code = http.StatusBadRequest, CodeHeaderMismatch
				}
			}
		}
		if status != 0 {
			h.e.stats.messages.Add(1)
			h.e.opts.Logger.Warn(fmt.Sprintf("refused %s: %s", msg.Method, text))
			writeRPCError(w, status, msg.ID, code, text, data)
			return false
		}
	}
	return h.answer(w, r, h.statelessSession(r), nil, msgs, false, func(http.Header) {})
}

// statelessSession returns the Session that holds the replay state of a
// stateless request.
func (h *HTTPHandler) statelessSession(r *http.Request) *session {
	return h.sharedState(r, h.stateless, nil) // protocol_sessionless.go
}

// unsupportedVersion is the data of an UnsupportedProtocolVersionError.
type unsupportedVersion struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// checkHeaders validates the request metadata headers of a stateless
// request (the 2026-07-28 transport's Server Validation), p what was read
// of its params. It returns the HTTP status, JSON-RPC code, message and
// data of the refusal, or status 0.
func checkHeaders(hd http.Header, msg *jsonrpc.Message, p mcp.RequestParams) (status, code int, text string, data any) {
	header := hd.Get(mcp.HeaderProtocolVersion)
	meta := p.ProtocolVersion()
	switch {
	case header == "":
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: the %s header is required for requests carrying %q", mcp.HeaderProtocolVersion, mcp.MetaProtocolVersion), nil
	case !mcp.Known(header):
		return 400, CodeUnsupportedProtocolVersion, fmt.Sprintf("Unsupported protocol version %q", header),
			unsupportedVersion{Supported: mcp.Versions(), Requested: header}
	case meta == "":
		return 400, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: missing _meta field %q", mcp.MetaProtocolVersion), nil
	case meta != header:
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value '%s'", mcp.HeaderProtocolVersion, header, meta), nil
	}
	method := hd.Get(mcp.HeaderMethod)
	switch {
	case method == "":
		return 400, CodeHeaderMismatch, "Header mismatch: missing required Mcp-Method header", nil
	case method != msg.Method:
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: Mcp-Method header value '%s' does not match body value '%s'", method, msg.Method), nil
	}
	field := mcp.NameMember(msg.Method)
	if field == "" {
		return 0, 0, "", nil
	}
	body := ""
	if raw := p.Named(msg.Method); raw != nil {
		var ok bool
		if body, ok = mcp.DecodeStringView(raw); !ok {
			return 400, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: %s must be a string", field), nil
		}
	}
	values := hd.Values(mcp.HeaderName)
	if len(values) == 0 {
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: missing required Mcp-Name header for method %q", msg.Method), nil
	}
	name, ok := mcp.DecodeValue(values[0])
	if !ok {
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: Mcp-Name header value %q is malformed", values[0]), nil
	}
	if name != body {
		return 400, CodeHeaderMismatch, fmt.Sprintf("Header mismatch: Mcp-Name header value '%s' does not match body value '%s'", name, body), nil
	}
	return 0, 0, "", nil
}
