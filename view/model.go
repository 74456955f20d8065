// Package view is mcpmock's web view of cassettes: a JSON model of each
// cassette (its messages in order, who sent each, what each is, which
// answers which, the tools the server listed), a page that draws it as a
// sequence diagram with a details pane, served over HTTP (Handler) or
// written as one self-contained HTML file (WriteHTML).
//
// The page reads the model from the JSON API (GET /api/cassettes and
// GET /api/cassettes/N) or, in a written file, from the JSON embedded in it;
// it loads nothing from the network. A cassette is untrusted input: the page
// shows every value as text, never as markup.
package view

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Document is the model of one cassette, as GET /api/cassettes/N returns it.
type Document struct {
	// Name is the cassette's name (its file name).
	Name string `json:"name"`
	// Meta is the cassette's "meta" member.
	Meta cassettes.Meta `json:"meta"`
	// Sessions are where each session starts: a session begins with each
	// handshake (initialize, or server/discover of 2026-07-28).
	Sessions []Session `json:"sessions"`
	// Messages are the cassette's messages in the order they passed.
	Messages []Message `json:"messages"`
	// Tools are the tools of each tools/list result, in order.
	Tools []ToolList `json:"tools"`
	// Replay is what a replay made of the cassette, when the view knows
	// (a live replay, or mcpmock view --report): the misses and the
	// recorded requests no client used.
	Replay *Replay `json:"replay,omitempty"`
}

// Session is one session of a cassette.
type Session struct {
	// Index is the session's number, from 0; First is the Seq of its first
	// message.
	Index int `json:"index"`
	First int `json:"first"`
}

// Message is one message of a cassette.
type Message struct {
	// Seq is the message's place in the cassette, from 0.
	Seq int `json:"seq"`
	// Session is the session it belongs to; Interaction the 1-based
	// interaction that holds it.
	Session     int `json:"session"`
	Interaction int `json:"interaction"`
	// From is "client", "server", or "mcpmock" for what mcpmock said
	// itself (Kind "note": a warning of the live log, the explanation of a
	// miss; Kind "miss": a request of a past replay that the cassette did
	// not answer).
	From string `json:"from"`
	// By is "mcpmock" for a message that mcpmock sent in the place of the
	// server (or the client): the answer to a miss, a scripted fault, a
	// guard's refusal. The page draws it from mcpmock's lane.
	By string `json:"by,omitempty"`
	// Kind is "request", "response", "error" (a JSON-RPC error response),
	// "notification", "raw" (a line that is not JSON-RPC), "note" or
	// "miss" (see From).
	Kind string `json:"kind"`
	// ID is the JSON-RPC id as written ("" for none).
	ID string `json:"id,omitempty"`
	// Method is the request's or notification's method; for a response, the
	// method of the request it answers.
	Method string `json:"method,omitempty"`
	// Tool is the tool of a tools/call and of its response.
	Tool string `json:"tool,omitempty"`
	// Summary is a short line about the message: the arguments of a call,
	// the text of a result, the values of a progress notification.
	Summary string `json:"summary,omitempty"`
	// Error is the message of a JSON-RPC error, or the text of a tool error
	// (IsError).
	Error   string `json:"error,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	// Pair is the Seq of the request this message answers or of the answer
	// to this request; for a note, the message it is about; -1 for none.
	Pair int `json:"pair"`
	// Outcome is, for a request of a replay, how mcpmock answered it:
	// "matched" (recorded interaction Answered, its first use), "repeated"
	// (Answered again), "scripted" (a scripted interaction or fault; on
	// the answer of Answered when it is not 0) or "missed".
	Outcome  string `json:"outcome,omitempty"`
	Answered int    `json:"answered,omitempty"`
	// Explanation is, for a missed request, mcpmock's explanation of the
	// miss with the field diff of the closest recorded requests.
	Explanation string `json:"explanation,omitempty"`
	// ListChange is, for a notifications/tools/list_changed, the indexes
	// in Document.Tools of the list before it and of the next list after
	// it; -1 where there is none.
	ListChange *ListChange `json:"listChange,omitempty"`
	// AtMs is the recorded time offset (0 unless recorded with timing).
	AtMs float64 `json:"atMs"`
	// Batch numbers the messages of one JSON-RPC batch.
	Batch int `json:"batch,omitempty"`
	// HTTP is the interaction's HTTP facts, on its request.
	HTTP *cassettes.HTTP `json:"http,omitempty"`
	// Note is what mcpmock said of it as it passed, in a live view:
	// "replayed #4", "no match", "scripted: overlay 1 interaction 2"; for
	// a note, its whole text. Level is a note's log level ("WARN").
	Note  string `json:"note,omitempty"`
	Level string `json:"level,omitempty"`
	// JSON is the message itself; Raw a line that was not JSON-RPC.
	JSON json.RawMessage `json:"json,omitempty"`
	Raw  string          `json:"raw,omitempty"`
}

// ToolList is one tools/list result: the tools the server listed then.
type ToolList struct {
	// Seq is the Seq of the result; Session its session.
	Seq     int    `json:"seq"`
	Session int    `json:"session"`
	Tools   []Tool `json:"tools"`
	// Added and Removed name the tools that this list has and the
	// previous one of the session had not, and the other way round (after a
	// notifications/tools/list_changed, what changed).
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Changed names the tools of both lists whose definition differs.
	Changed []string `json:"changed,omitempty"`
}

// ListChange is where a list_changed notification stands between the
// tool lists: Before and After index Document.Tools, -1 for none.
type ListChange struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// Tool is one listed tool.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Build makes the model of a cassette.
func Build(name string, c *cassettes.Cassette) *Document {
	b := newBuilder(name)
	b.doc.Meta = c.Meta
	for i := range c.Interactions {
		b.interaction(i+1, &c.Interactions[i])
	}
	return b.doc
}

func newBuilder(name string) *builder {
	return &builder{doc: &Document{Name: name, Sessions: []Session{}, Messages: []Message{}, Tools: []ToolList{}}, session: -1, lastTools: -1, answered: map[int]int{}}
}

// builder walks a cassette into a Document.
type builder struct {
	doc     *Document
	session int
	// pending are the requests of the session not yet answered, by
	// direction and id: the Seq of each.
	pending map[string]int
	// lastTools is the session's latest tool list (its index in
	// doc.Tools, -1 for none); changes are the list_changed notifications
	// that wait for the next list.
	lastTools int
	changes   []int
	// answered counts the uses of each recorded interaction (a replay's
	// outcomes).
	answered map[int]int
}

func (b *builder) interaction(n int, in *cassettes.Interaction) {
	switch {
	case in.Request != nil:
		b.message(n, in.From, in.AtMs, in.Batch, in.Request, nil, in.HTTP)
	case in.Notification != nil:
		b.message(n, in.From, in.AtMs, in.Batch, in.Notification, nil, in.HTTP)
	case in.Raw != nil:
		b.message(n, in.From, in.AtMs, in.Batch, nil, in.Raw, in.HTTP)
	}
	for _, m := range in.Exchange {
		b.message(n, m.From, m.AtMs, m.Batch, m.Message, m.Raw, nil)
	}
	if r := in.Response; r != nil {
		from := r.From
		if from == "" { // a hand-written overlay
			from = opposite(in.From)
		}
		b.message(n, from, r.AtMs, r.Batch, r.Message, r.Raw, nil)
	}
}

func opposite(d cassettes.Direction) cassettes.Direction {
	if d == cassettes.FromServer {
		return cassettes.FromClient
	}
	return cassettes.FromServer
}

// message adds one message.
func (b *builder) message(n int, from cassettes.Direction, at cassettes.Millis, batch int, raw json.RawMessage, line *string, h *cassettes.HTTP) {
	m := Message{Seq: len(b.doc.Messages), Interaction: n, From: string(from), Pair: -1, AtMs: float64(at), Batch: batch, HTTP: h}
	if from == "" {
		m.From = string(cassettes.FromClient)
	}
	var msg *jsonrpc.Message
	if raw != nil {
		if p, err := jsonrpc.Parse(raw); err == nil {
			msg = p
		}
	}
	if msg == nil {
		m.Kind = "raw"
		switch {
		case line != nil:
			m.Raw = *line
		default:
			m.Raw = string(raw)
		}
		m.Summary = short(m.Raw, 80)
		b.add(m)
		return
	}
	m.JSON = raw
	m.ID = string(msg.ID)
	switch msg.Kind() {
	case jsonrpc.KindRequest:
		m.Kind, m.Method = "request", msg.Method
		if mcp.Handshake(msg.Method) || b.session < 0 {
			b.newSession(m.Seq)
		}
		if name, ok := mcp.ToolName(msg.Params); ok && msg.Method == "tools/call" {
			m.Tool = name
			m.Summary = short(gjson.GetBytes(msg.Params, "arguments").Raw, 80)
		} else if len(msg.Params) > 0 {
			m.Summary = paramsSummary(msg.Method, msg.Params)
		}
		b.pending[m.From+" "+m.ID] = m.Seq
	case jsonrpc.KindNotification:
		m.Kind, m.Method = "notification", msg.Method
		if b.session < 0 {
			b.newSession(m.Seq)
		}
		m.Summary = paramsSummary(msg.Method, msg.Params)
		if msg.Method == "notifications/tools/list_changed" {
			m.ListChange = &ListChange{Before: b.lastTools, After: -1}
			b.changes = append(b.changes, m.Seq)
		}
	default: // a response
		if b.session < 0 {
			b.newSession(m.Seq)
		}
		m.Kind = "response"
		if msg.Error != nil {
			m.Kind, m.Error = "error", fmt.Sprintf("%d %s", msg.Error.Code, msg.Error.Message)
		}
		key := string(opposite(from)) + " " + m.ID
		if req, ok := b.pending[key]; ok {
			delete(b.pending, key)
			m.Pair = req
			b.doc.Messages[req].Pair = m.Seq
			m.Method, m.Tool = b.doc.Messages[req].Method, b.doc.Messages[req].Tool
			if o := b.doc.Messages[req].Outcome; o == "missed" || o == "scripted" {
				m.By = "mcpmock"
			}
		}
		if msg.Result != nil {
			b.result(&m, msg.Result)
		}
		if ownAnswer(m.Error) {
			m.By = "mcpmock"
		}
	}
	m.Session = b.session
	b.add(m)
}

// messageNoted adds a message of live traffic with what mcpmock said of it
// as it passed (its note), and what a replay made of it.
func (b *builder) messageNoted(from cassettes.Direction, at cassettes.Millis, raw json.RawMessage, line *string, note string) {
	n := len(b.doc.Messages)
	b.message(0, from, at, 0, raw, line, nil)
	if len(b.doc.Messages) > n {
		b.doc.Messages[n].Note = note
		b.outcome(&b.doc.Messages[n])
	}
}

func (b *builder) newSession(seq int) {
	b.session++
	b.pending = map[string]int{}
	b.lastTools, b.changes = -1, nil
	b.doc.Sessions = append(b.doc.Sessions, Session{Index: b.session, First: seq})
}

func (b *builder) add(m Message) {
	if m.Session < 0 || b.session < 0 {
		if b.session < 0 {
			b.newSession(m.Seq)
		}
		m.Session = b.session
	}
	b.doc.Messages = append(b.doc.Messages, m)
}

// result fills in what a result says: a tool error, the text of a call, the
// tools of a list.
func (b *builder) result(m *Message, result json.RawMessage) {
	r := gjson.ParseBytes(result)
	if r.Get("isError").Bool() {
		m.IsError = true
		m.Error = short(contentText(r.Get("content")), 200)
	}
	switch {
	case m.Method == "tools/list" || r.Get("tools").IsArray():
		list := ToolList{Seq: m.Seq, Session: b.session, Tools: []Tool{}}
		names := []string{}
		r.Get("tools").ForEach(func(_, t gjson.Result) bool {
			tool := Tool{Name: t.Get("name").String(), Description: t.Get("description").String()}
			for dst, key := range map[*json.RawMessage]string{&tool.InputSchema: "inputSchema", &tool.OutputSchema: "outputSchema", &tool.Annotations: "annotations"} {
				if v := t.Get(key); v.Exists() {
					*dst = json.RawMessage(v.Raw)
				}
			}
			list.Tools = append(list.Tools, tool)
			names = append(names, tool.Name)
			return true
		})
		if b.lastTools >= 0 {
			list.Added, list.Removed, list.Changed = compareTools(b.doc.Tools[b.lastTools].Tools, list.Tools)
		}
		b.lastTools = len(b.doc.Tools)
		for _, seq := range b.changes {
			b.doc.Messages[seq].ListChange.After = b.lastTools
		}
		b.changes = nil
		b.doc.Tools = append(b.doc.Tools, list)
		m.Summary = strconv.Itoa(len(names)) + " tools: " + short(strings.Join(names, ", "), 80)
	case r.Get("content").IsArray():
		m.Summary = short(contentText(r.Get("content")), 80)
	default:
		for _, list := range mcp.Lists() {
			if items := r.Get(list.Items); items.IsArray() {
				m.Summary = fmt.Sprintf("%d %s", len(items.Array()), list.Items)
				return
			}
		}
		m.Summary = short(r.Raw, 80)
	}
}

// contentText joins the text of content blocks and names the others.
func contentText(content gjson.Result) string {
	var parts []string
	content.ForEach(func(_, c gjson.Result) bool {
		switch t := c.Get("type").String(); t {
		case "text":
			parts = append(parts, c.Get("text").String())
		default:
			parts = append(parts, "["+t+"]")
		}
		return true
	})
	return strings.Join(parts, " ")
}

// paramsSummary says the params of a request or notification briefly:
// the values of a progress notification, the level and data of a log
// message, the params otherwise.
func paramsSummary(method string, params json.RawMessage) string {
	p := gjson.ParseBytes(params)
	switch method {
	case "notifications/progress":
		s := "progress " + p.Get("progress").Raw
		if total := p.Get("total"); total.Exists() {
			s += "/" + total.Raw
		}
		if msg := p.Get("message"); msg.Exists() {
			s += " " + msg.String()
		}
		return short(s, 80)
	case "notifications/message":
		return short(p.Get("level").String()+": "+p.Get("data").Raw, 80)
	}
	return short(string(params), 80)
}

// compareTools says which tools of after are new, which of before are
// gone, and which are in both with another definition.
func compareTools(before, after []Tool) (added, removed, changed []string) {
	old := map[string]Tool{}
	for _, t := range before {
		old[t.Name] = t
	}
	now := map[string]bool{}
	for _, t := range after {
		now[t.Name] = true
		o, ok := old[t.Name]
		switch {
		case !ok:
			added = append(added, t.Name)
		case o.Description != t.Description || !sameJSON(o.InputSchema, t.InputSchema) || !sameJSON(o.OutputSchema, t.OutputSchema) || !sameJSON(o.Annotations, t.Annotations):
			changed = append(changed, t.Name)
		}
	}
	for _, t := range before {
		if !now[t.Name] {
			removed = append(removed, t.Name)
		}
	}
	return added, removed, changed
}

// sameJSON compares two JSON values whatever their spacing and order of
// members.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// ownAnswer says whether an error's text is mcpmock's own: the answer to a
// miss, a scripted fault, a guard's refusal.
func ownAnswer(text string) bool {
	for _, p := range []string{"mcpmock:", "mcpmock guard:"} {
		if strings.HasPrefix(text, p) || strings.Contains(text, " "+p) {
			return true
		}
	}
	return false
}

// short cuts s to at most max runes, with an ellipsis.
func short(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
