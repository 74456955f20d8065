package guard

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// ownIDPrefix starts the ids of the guard's own requests: a string id that
// the client libraries, which number their requests, never use.
const ownIDPrefix = "mcpmock-guard-tools-list-"

// ownList is one listing of the guard's own, page after page.
type ownList struct {
	// seen are the names that the earlier pages listed.
	seen map[string]bool
	// meta is the per-request _meta of 2026-07-28 that each page's request
	// carries (copied from the client's); nil in the stateful era.
	meta json.RawMessage
	// done, when set, is closed when the listing ends (pin.go).
	done chan struct{}
}

// listOwn returns a tools/list request of the guard's own (the page after
// cursor, or the first), and remembers it.
func (g *Guard) listOwn(session string, ol *ownList, cursor string) []byte {
	g.mu.Lock()
	g.ownSeq++
	id := jsonrpc.ID(mustJSON(fmt.Sprintf("%s%d", ownIDPrefix, g.ownSeq)))
	g.own[key{session, id}] = ol
	g.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/list"}
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	if ol.meta != nil {
		params["_meta"] = ol.meta
	}
	if len(params) > 0 {
		msg["params"] = params
	}
	return mustJSON(msg)
}

// ownListed takes in one page of the answer to the guard's own tools/list:
// it logs the tools and remembers their annotations, asks for the next page,
// and after the last one forgets the tools the server no longer lists. The
// answer goes no further.
func (g *Guard) ownListed(session string, msg *jsonrpc.Message, ol *ownList) Verdict {
	seen := ol.seen
	if msg.Error != nil {
		g.pinOwnDone(ol)
		g.log.Warn(fmt.Sprintf("guard: the server refused the guard's own tools/list: %s; the tools are known again when the client lists them", msg.Error.Error()))
		return Verdict{}
	}
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		g.pinOwnDone(ol)
		g.log.Warn(fmt.Sprintf("guard: the answer to the guard's own tools/list is not a list of tools: %v", err))
		return Verdict{}
	}
	var live []liveName
	if g.pin != nil {
		live = g.pinPage(res.Tools)
	}
	for i, rt := range res.Tools {
		if name, _ := g.expose(rt, live == nil || live[i].name == "" || g.trusted(live[i])); name != "" {
			seen[name] = true
		}
	}
	if res.NextCursor != "" {
		return Verdict{ToServer: g.listOwn(session, ol, res.NextCursor)}
	}
	if g.pin != nil {
		g.pinListed(seen)
		g.pinOwnDone(ol)
	}
	var gone []string
	g.mu.Lock()
	for name := range g.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(g.tools, name)
		}
	}
	g.mu.Unlock()
	sort.Strings(gone)
	for _, name := range gone {
		g.log.Info(fmt.Sprintf("⚑ tool %s: no longer exposed by the server", name), slog.String("tool", name), slog.String("guard", "gone"))
	}
	return Verdict{}
}
