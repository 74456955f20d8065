package mcp

import (
	"encoding/json"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// RequestParams is what mcpmock reads of a request's params, found in one
// pass over their members and one over their _meta, where looking each up
// on its own scans the params once a member: a 2026-07-28 request repeats
// its protocol version, capabilities and client in every _meta, and
// several checks of a request read them. Each field is the member's JSON
// as written, a sub-slice of the params; nil where it is absent (or the
// params are no object). As with jsonrpc.Member, the last of duplicate
// names wins.
type RequestParams struct {
	Meta, Name, Arguments        json.RawMessage
	URI                          json.RawMessage // of resources/read
	RequestState, InputResponses json.RawMessage
	// Of _meta.
	Version, ClientCapabilities, LogLevel json.RawMessage
}

// ReadParams reads params, the params of a valid JSON-RPC message.
func ReadParams(params json.RawMessage) RequestParams {
	var p RequestParams
	if len(params) == 0 || params[0] != '{' {
		return p
	}
	err := jsonrpc.EachMemberRaw(params, func(quoted, value []byte) error {
		switch {
		case jsonrpc.NameIs(quoted, "_meta"):
			p.Meta = value
		case jsonrpc.NameIs(quoted, "name"):
			p.Name = value
		case jsonrpc.NameIs(quoted, "arguments"):
			p.Arguments = value
		case jsonrpc.NameIs(quoted, "uri"):
			p.URI = value
		case jsonrpc.NameIs(quoted, "requestState"):
			p.RequestState = value
		case jsonrpc.NameIs(quoted, "inputResponses"):
			p.InputResponses = value
		}
		return nil
	})
	if err != nil {
		return RequestParams{}
	}
	if len(p.Meta) == 0 || p.Meta[0] != '{' {
		return p
	}
	err = jsonrpc.EachMemberRaw(p.Meta, func(quoted, value []byte) error {
		switch {
		case jsonrpc.NameIs(quoted, MetaProtocolVersion):
			p.Version = value
		case jsonrpc.NameIs(quoted, MetaClientCapabilities):
			p.ClientCapabilities = value
		case jsonrpc.NameIs(quoted, MetaLogLevel):
			p.LogLevel = value
		}
		return nil
	})
	if err != nil {
		p.Version, p.ClientCapabilities, p.LogLevel = nil, nil, nil
	}
	return p
}

// Rebase is p read from to instead of from, which holds the same bytes:
// each member's span of from becomes the same span of to. A caller that
// keeps a copy of the params moves what it read to the copy and back.
// The spans are sub-slices as ReadParams makes them (to the end of their
// array), so that one rebased can be rebased again.
func (p RequestParams) Rebase(from, to []byte) RequestParams {
	for _, f := range []*json.RawMessage{&p.Meta, &p.Name, &p.Arguments, &p.URI, &p.RequestState, &p.InputResponses, &p.Version, &p.ClientCapabilities, &p.LogLevel} {
		if *f != nil {
			at := cap(from) - cap(*f)
			*f = to[at : at+len(*f)]
		}
	}
	return p
}

// Named is the raw name member of a request of method: params.name of
// tools/call and prompts/get, params.uri of resources/read (NameMember);
// nil for other methods or when absent.
func (p RequestParams) Named(method string) json.RawMessage {
	switch NameMember(method) {
	case "name":
		return p.Name
	case "uri":
		return p.URI
	}
	return nil
}

// ProtocolVersion is the protocol version the _meta names, "" for none
// (MetaVersion).
func (p RequestParams) ProtocolVersion() string {
	if p.Version == nil {
		return ""
	}
	return stringValue(p.Version)
}

// Retry is RequestState of the params p was read from.
func (p RequestParams) Retry() (string, bool) {
	if p.RequestState == nil && p.InputResponses == nil {
		return "", false
	}
	var state *string
	if p.RequestState != nil && json.Unmarshal(p.RequestState, &state) != nil {
		return "", false // as decoding the params whole fails
	}
	if state != nil {
		return *state, true
	}
	return "", len(p.InputResponses) > 0
}
