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
	// From is "client" or "server".
	From string `json:"from"`
	// Kind is "request", "response", "error" (a JSON-RPC error response),
	// "notification" or "raw" (a line that is not JSON-RPC).
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
	// to this request; -1 for none.
	Pair int `json:"pair"`
	// AtMs is the recorded time offset (0 unless recorded with timing).
	AtMs float64 `json:"atMs"`
	// Batch numbers the messages of one JSON-RPC batch.
	Batch int `json:"batch,omitempty"`
	// HTTP is the interaction's HTTP facts, on its request.
	HTTP *cassettes.HTTP `json:"http,omitempty"`
	// Note is what mcpmock said of it as it passed, in a live view:
	// "replayed #4", "no match", "scripted: overlay 1 interaction 2".
	Note string `json:"note,omitempty"`
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
	b := &builder{doc: &Document{Name: name, Meta: c.Meta, Sessions: []Session{}, Messages: []Message{}, Tools: []ToolList{}}, session: -1}
	for i := range c.Interactions {
		b.interaction(i+1, &c.Interactions[i])
	}
	return b.doc
}

// builder walks a cassette into a Document.
type builder struct {
	doc     *Document
	session int
	// pending are the requests of the session not yet answered, by
	// direction and id: the Seq of each.
	pending map[string]int
	// lastTools is the session's latest tool list.
	lastTools []string
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
		}
		if msg.Result != nil {
			b.result(&m, msg.Result)
		}
	}
	m.Session = b.session
	b.add(m)
}

func (b *builder) newSession(seq int) {
	b.session++
	b.pending = map[string]int{}
	b.lastTools = nil
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
		var names []string
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
		if b.lastTools != nil {
			list.Added, list.Removed = difference(names, b.lastTools), difference(b.lastTools, names)
		}
		b.lastTools = names
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

// difference returns the names of a that b lacks.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, n := range b {
		in[n] = true
	}
	var out []string
	for _, n := range a {
		if !in[n] {
			out = append(out, n)
		}
	}
	return out
}

// short cuts s to at most max runes, with an ellipsis.
func short(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
