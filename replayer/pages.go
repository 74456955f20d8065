package replayer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file re-pages recorded lists: with a page size (Options.PageSize, or
// the cassette's "replay": {"pageSize": N}), the items of every recorded
// page of a listing (a first page and the pages its nextCursor chain led
// to) are joined in order, deduplicated by name (uri for resources,
// uriTemplate for templates), and served in pages of N with opaque cursors.

// listing is one recorded list: its pages and their items.
type listing struct {
	n     int   // position in Engine.listings[method]
	pages []int // request positions, first page first
	items []json.RawMessage
	next  string // the last page's nextCursor
}

// pageSize is the effective page size, 0 for none.
func (e *Engine) pageSize() int {
	if e.opts.PageSize > 0 {
		return e.opts.PageSize
	}
	if e.cassette.Replay != nil {
		return e.cassette.Replay.PageSize
	}
	return 0
}

// prepareLists builds the recorded listings of each list method.
func (e *Engine) prepareLists() {
	e.listings = map[string][]*listing{}
	e.listingOf = map[int]*listing{}
	for _, spec := range mcp.Lists() {
		method := spec.Method
		var all []*listing
		for _, n := range e.byMethod[method] {
			r := &e.requests[n]
			if r.interaction.Response == nil {
				continue
			}
			resp, err := jsonrpc.Parse(r.interaction.Response.Message)
			if err != nil || resp.Error != nil || resp.Result == nil {
				continue
			}
			var result map[string]json.RawMessage
			if json.Unmarshal(resp.Result, &result) != nil {
				continue
			}
			var items []json.RawMessage
			json.Unmarshal(result[spec.Items], &items)
			var next string
			json.Unmarshal(result["nextCursor"], &next)
			var l *listing
			if c := mcp.Cursor(r.req.Params); c != "" {
				for i := len(all) - 1; i >= 0; i-- {
					if all[i].next == c {
						l = all[i]
						break
					}
				}
				if l == nil && len(all) > 0 {
					l = all[len(all)-1]
				}
			}
			if l == nil {
				l = &listing{n: len(all)}
				all = append(all, l)
			}
			l.pages = append(l.pages, n)
			l.next = next
			seen := map[string]bool{}
			for _, it := range l.items {
				seen[itemKey(it, spec.Key)] = true
			}
			for _, it := range items {
				if k := itemKey(it, spec.Key); !seen[k] {
					seen[k] = true
					l.items = append(l.items, it)
				}
			}
			e.listingOf[n] = l
		}
		if len(all) > 0 {
			e.listings[method] = all
		}
	}
}

func itemKey(item json.RawMessage, key string) string {
	raw, err := jsonrpc.Member(item, key)
	if err != nil || raw == nil {
		return string(item)
	}
	return string(raw)
}

// pageCursor is the opaque cursor of a re-paged list: the listing, the
// session's list generation when it was issued, and the offset.
func pageCursor(l *listing, gen, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("mcpmock:%d:%d:%d", l.n, gen, offset)))
}

func parseCursor(c string) (listing, gen, offset int, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, 0, false
	}
	parts := strings.Split(string(b), ":")
	if len(parts) != 4 || parts[0] != "mcpmock" {
		return 0, 0, 0, false
	}
	var v [3]int
	for i := range v {
		if v[i], err = strconv.Atoi(parts[i+1]); err != nil || v[i] < 0 {
			return 0, 0, 0, false
		}
	}
	return v[0], v[1], v[2], true
}

// invalidCursor is the -32602 answer of an unknown or stale cursor.
func invalidCursor(msg *jsonrpc.Message, why string) *answerPlan {
	return &answerPlan{Steps: []step{{Kind: stepSend, Response: true, Message: jsonrpc.ErrorResponse(msg.ID, &jsonrpc.Error{
		Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + why})}}}
}

// repage answers a list request from the re-paged recording, or returns
// nil when re-paging is off or does not apply.
func (s *session) repage(msg *jsonrpc.Message, live matcher.Request) *answerPlan {
	size := s.e.pageSize()
	spec, isList := mcp.ListOf(msg.Method)
	if size <= 0 || !isList || len(s.e.listings[msg.Method]) == 0 {
		return nil
	}
	kind := mcp.ListKind(msg.Method)
	cursor := mcp.Cursor(msg.Params)
	var l *listing
	offset := 0
	var plan *answerPlan
	if cursor == "" {
		r, _ := s.choose(live)
		if r == nil {
			return nil
		}
		s.e.stats.matched.Add(1)
		if l = s.e.listingOf[r.pos]; l == nil {
			s.e.markUsed(r)
			return s.answer(msg, r)
		}
		plan = s.answer(msg, &s.e.requests[l.pages[0]])
		s.mu.Lock()
		s.listing[msg.Method] = l.n
		s.mu.Unlock()
	} else {
		n, gen, off, ok := parseCursor(cursor)
		all := s.e.listings[msg.Method]
		if !ok || n >= len(all) || off > len(all[n].items) {
			return invalidCursor(msg, fmt.Sprintf("unknown cursor %q", cursor))
		}
		s.mu.Lock()
		cur, started := s.listing[msg.Method]
		stale := !started || cur != n || s.gens[kind] != gen
		s.mu.Unlock()
		if stale {
			return invalidCursor(msg, fmt.Sprintf("stale cursor %q: the list changed since it was issued, list again from the start", cursor))
		}
		l, offset = all[n], off
		s.e.stats.matched.Add(1)
		plan = s.answerWith(msg, s.e.requests[l.pages[0]].interaction, 0, nil)
		plan.Interaction = s.e.requests[l.pages[0]].index + 1
		if offset+size >= len(l.items) {
			for _, p := range l.pages[1:] {
				before, after := s.followUps(&s.e.requests[p])
				for _, b := range before {
					plan.Steps = append(plan.Steps, b.steps...)
				}
				plan.Steps = append(plan.Steps, after...)
			}
		}
	}
	for _, p := range l.pages {
		s.e.markUsed(&s.e.requests[p])
	}
	end := min(offset+size, len(l.items))
	page := l.items[offset:end]
	if page == nil {
		page = []json.RawMessage{}
	}
	s.mu.Lock()
	gen := s.gens[kind]
	s.mu.Unlock()
	for i, st := range plan.Steps {
		if !st.Response {
			continue
		}
		out, err := jsonrpc.SetMember(st.Message, mustJSON(page), "result", spec.Items)
		if err != nil {
			break
		}
		if end < len(l.items) {
			out, err = jsonrpc.SetMember(out, mustJSON(pageCursor(l, gen, end)), "result", "nextCursor")
		} else if res, rerr := jsonrpc.Member(out, "result"); rerr == nil && res != nil {
			var stripped json.RawMessage
			if stripped, err = jsonrpc.DeleteMember(res, "nextCursor"); err == nil {
				out, err = jsonrpc.SetMember(out, stripped, "result")
			}
		}
		if err == nil {
			plan.Steps[i].Message = out
		}
	}
	return plan
}
