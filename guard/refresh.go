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

// ownList returns a tools/list request of the guard's own (the page after
// cursor, or the first), and remembers it with the names that the earlier
// pages listed.
func (g *Guard) ownList(session, cursor string, seen map[string]bool) []byte {
	if seen == nil {
		seen = map[string]bool{}
	}
	g.mu.Lock()
	g.ownSeq++
	id := jsonrpc.ID(mustJSON(fmt.Sprintf("%s%d", ownIDPrefix, g.ownSeq)))
	g.own[key{session, id}] = seen
	g.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/list"}
	if cursor != "" {
		msg["params"] = map[string]any{"cursor": cursor}
	}
	return mustJSON(msg)
}

// ownListed takes in one page of the answer to the guard's own tools/list:
// it logs the tools and remembers their annotations, asks for the next page,
// and after the last one forgets the tools the server no longer lists. The
// answer goes no further.
func (g *Guard) ownListed(session string, msg *jsonrpc.Message, seen map[string]bool) Verdict {
	if msg.Error != nil {
		g.log.Warn(fmt.Sprintf("mcpmock guard: the server refused the guard's own tools/list: %s; the tools are known again when the client lists them", msg.Error.Error()))
		return Verdict{}
	}
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		g.log.Warn(fmt.Sprintf("mcpmock guard: the answer to the guard's own tools/list is not a list of tools: %v", err))
		return Verdict{}
	}
	for _, rt := range res.Tools {
		if name, _ := g.expose(rt); name != "" {
			seen[name] = true
		}
	}
	if res.NextCursor != "" {
		return Verdict{ToServer: g.ownList(session, res.NextCursor, seen)}
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
