package guard

import (
	"encoding/json"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// maxListens bounds the subscriptions/listen requests whose _meta the guard
// keeps: a stream that the client closes over HTTP gets no answer that
// would let the guard forget it.
const maxListens = 256

// requestMeta returns the per-request protocol fields of a client
// request's params._meta as an object, or nil when it has no protocol
// version (a request of the stateful era).
func requestMeta(params json.RawMessage) json.RawMessage {
	meta, _ := jsonrpc.Member(params, "_meta")
	if meta == nil {
		return nil
	}
	out := json.RawMessage(`{}`)
	for _, k := range []string{mcp.MetaProtocolVersion, mcp.MetaClientInfo, mcp.MetaClientCapabilities} {
		if v, _ := jsonrpc.Member(meta, k); v != nil {
			out, _ = jsonrpc.SetMember(out, v, k)
		}
	}
	if v, _ := jsonrpc.Member(out, mcp.MetaProtocolVersion); v == nil {
		return nil
	}
	return out
}

// noteMeta remembers the per-request fields of a client request: the
// latest request's, and each open subscriptions/listen's (until the server
// answers it), for the guard's own requests. A request without them (an
// initialize after a server/discover probe) makes the latest nil: the
// session is of the stateful era, where they do not belong.
func (g *Guard) noteMeta(k key, msg *jsonrpc.Message) {
	meta := requestMeta(msg.Params)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.latestMeta = meta
	if meta == nil || msg.Method != "subscriptions/listen" {
		return
	}
	if len(g.listens) >= maxListens {
		for old := range g.listens {
			delete(g.listens, old)
			break
		}
	}
	g.listens[k] = meta
}

// metaFor returns the per-request fields for the guard's own request that
// a notification from the server asks for: those of the subscriptions/listen
// whose stream carried it, else the client's latest; nil in the stateful
// era.
func (g *Guard) metaFor(session string, note *jsonrpc.Message) json.RawMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	if meta, _ := jsonrpc.Member(note.Params, "_meta"); meta != nil {
		if sub, _ := jsonrpc.Member(meta, mcp.MetaSubscriptionID); sub != nil {
			if m := g.listens[key{session, jsonrpc.ID(sub)}]; m != nil {
				return m
			}
		}
	}
	return g.latestMeta
}
