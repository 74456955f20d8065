// Package livelog turns JSON-RPC messages into the live log lines that
// mcpmock writes to stderr: one readable line per message (direction, id,
// method, tool, short arguments, latency, errors marked), carried by log/slog
// so that the command line can pick a text or a JSON handler.
package livelog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// Directions as they appear in the log.
const (
	ToServer = "→" // client to server
	ToClient = "←" // server to client
)

// Message logs one message. latency is the time since the matching request
// for a response (0 otherwise); note is appended in brackets (for example
// "replayed #4" or "no match").
func Message(l *slog.Logger, dir string, msg *jsonrpc.Message, latency time.Duration, note string) {
	if l == nil || !l.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	rd := redactorOf(l)
	line, level, attrs := describe(rd, dir, msg, latency, note)
	if v, ok := l.Handler().(Viewer); ok && v.TakesMessages() {
		full, _ := rd.RedactJSON(msg.Raw)
		attrs = append(attrs, slog.Any(MessageKey, json.RawMessage(full)), slog.String(NoteKey, note))
	}
	l.LogAttrs(context.Background(), level, line, attrs...)
}

// A Viewer is a slog.Handler that shows messages whole (the web view of
// mcpmock view, live): Message adds each message to its record, redacted as
// the line is, as the attribute MessageKey, and the note as NoteKey. Other
// handlers get neither, so that the live log costs what it did.
type Viewer interface {
	slog.Handler
	TakesMessages() bool
}

// The attributes that a Viewer gets beside the others.
const (
	MessageKey = "message"
	NoteKey    = "note"
)

// Describe returns the log line of a message, its level (warnings for
// errors) and its attributes for structured logs, with the secrets that
// the default redaction rules know hidden.
func Describe(dir string, msg *jsonrpc.Message, latency time.Duration, note string) (string, slog.Level, []slog.Attr) {
	return describe(defaultRedactor(), dir, msg, latency, note)
}

// describe is Describe by the rules of rd: the message is redacted first,
// as a cassette would hold it, then described.
func describe(rd *cassettes.Redactor, dir string, msg *jsonrpc.Message, latency time.Duration, note string) (string, slog.Level, []slog.Attr) {
	msg = redactMessage(rd, msg)
	short := func(raw []byte, max int) string { return shortened(rd, raw, max) }
	attrs := []slog.Attr{slog.String("dir", dirName(dir)), slog.String("kind", msg.Kind().String())}
	var sb strings.Builder
	sb.WriteString(dir)
	if !msg.ID.IsZero() {
		sb.WriteString(" ")
		sb.WriteString(string(msg.ID))
		attrs = append(attrs, slog.String("id", string(msg.ID)))
	}
	level := slog.LevelInfo
	switch msg.Kind() {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		sb.WriteString(" " + msg.Method)
		attrs = append(attrs, slog.String("method", msg.Method))
		if tool, args := toolCall(msg); tool != "" {
			sb.WriteString(" " + tool + " " + short(args, 80))
			attrs = append(attrs, slog.String("tool", tool), slog.String("args", short(args, 200)))
		} else if msg.Method != "tools/call" && len(msg.Params) > 0 && !strings.HasPrefix(msg.Method, "notifications/") {
			if p := short(withoutMeta(msg.Params), 60); p != "{}" {
				sb.WriteString(" " + p)
			}
		}
	case jsonrpc.KindResponse:
		if msg.Error != nil {
			level = slog.LevelWarn
			fmt.Fprintf(&sb, " ✗ error %d: %s", msg.Error.Code, firstLine(msg.Error.Message))
			attrs = append(attrs, slog.Int("error", msg.Error.Code), slog.String("message", msg.Error.Message))
		} else if text, isErr := toolError(msg.Result); isErr {
			level = slog.LevelWarn
			sb.WriteString(" ✗ tool error: " + short([]byte(strconvQuote(text)), 80))
			attrs = append(attrs, slog.Bool("isError", true))
		} else {
			sb.WriteString(" result " + summary(rd, msg.Result))
		}
	default:
		sb.WriteString(" invalid message " + short(msg.Raw, 80))
	}
	if latency > 0 {
		fmt.Fprintf(&sb, " (%s)", roundLatency(latency))
		attrs = append(attrs, slog.Float64("latencyMs", float64(latency.Microseconds())/1000))
	}
	if note != "" {
		sb.WriteString(" [" + note + "]")
		attrs = append(attrs, slog.String("note", note))
	}
	return sb.String(), level, attrs
}

// Raw logs a line that is not JSON-RPC.
func Raw(l *slog.Logger, dir string, line []byte, why string) {
	if l == nil {
		return
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, fmt.Sprintf("%s ✗ not JSON-RPC (%s): %s", dir, why, shortened(redactorOf(l), line, 80)),
		slog.String("dir", dirName(dir)), slog.String("kind", "raw"), slog.String("error", why))
}

// redactMessage returns msg with the secrets of its params, result and
// error hidden by rd; msg itself when there are none.
func redactMessage(rd *cassettes.Redactor, msg *jsonrpc.Message) *jsonrpc.Message {
	params, n := rd.RedactJSON(msg.Params)
	result, k := rd.RedactJSON(msg.Result)
	n += k
	var e *jsonrpc.Error
	if msg.Error != nil {
		c := *msg.Error
		c.Message, k = rd.RedactText(c.Message)
		n += k
		c.Data, k = rd.RedactJSON(c.Data)
		n += k
		e = &c
	}
	if n == 0 {
		return msg
	}
	m := *msg
	m.Params, m.Result, m.Error = params, result, e
	return &m
}

func dirName(dir string) string {
	if dir == ToServer {
		return "client→server"
	}
	return "server→client"
}

func toolCall(msg *jsonrpc.Message) (tool string, args json.RawMessage) {
	if msg.Method != "tools/call" {
		return "", nil
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return "", nil
	}
	if p.Arguments == nil {
		p.Arguments = json.RawMessage("{}")
	}
	return p.Name, p.Arguments
}

func toolError(result json.RawMessage) (string, bool) {
	if !bytes.Contains(result, []byte(`"isError"`)) {
		return "", false
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError {
		return "", false
	}
	if len(r.Content) > 0 {
		return r.Content[0].Text, true
	}
	return "", true
}

// summary shortens a result for the log: the content of a tool result,
// anything else without its _meta.
func summary(rd *cassettes.Redactor, result json.RawMessage) string {
	short := func(raw []byte, max int) string { return shortened(rd, raw, max) }
	var r struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) == nil && len(r.Content) > 0 {
		var parts []string
		for _, c := range r.Content {
			if c.Type == "text" {
				parts = append(parts, short([]byte(strconvQuote(c.Text)), 60))
			} else {
				parts = append(parts, strings.TrimSpace(c.Type+" "+c.MimeType))
			}
		}
		return strings.Join(parts, ", ")
	}
	return short(withoutMeta(result), 60)
}

func withoutMeta(params json.RawMessage) json.RawMessage {
	out, err := jsonrpc.DeleteMember(params, "_meta")
	if err != nil {
		return params
	}
	return out
}

// shortened is raw compacted and cut to max runes, with the values and
// patterns of rd hidden before it is cut.
func shortened(rd *cassettes.Redactor, raw []byte, max int) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		buf.Reset()
		buf.Write(raw)
	}
	s := buf.String()
	// Redact before cutting, with some room, so that no secret is shown
	// in part; not the whole of a long message, to keep logging cheap.
	cut := false
	if len(s) > 4*max+256 {
		s, cut = s[:4*max+256], true
	}
	s, _ = rd.RedactText(s)
	if r := []rune(s); len(r) > max || cut {
		return string(r[:min(max, len(r))]) + "…"
	}
	return s
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func roundLatency(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// TextHandler is a slog.Handler for people: each record is one line,
// "mcpmock: " followed by the message, without attributes. It is safe for
// concurrent use.
type TextHandler struct {
	mu    *sync.Mutex // guards w
	w     io.Writer
	color bool
}

// NewTextHandler returns a TextHandler writing to w.
func NewTextHandler(w io.Writer) *TextHandler { return &TextHandler{mu: new(sync.Mutex), w: w} }

// Colored returns h writing in colour, for a terminal: warnings and errors
// red, the client's messages cyan, the server's green (the colours of
// mcpmock cassette show).
func (h *TextHandler) Colored() *TextHandler {
	c := *h
	c.color = true
	return &c
}

func (h *TextHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *TextHandler) Handle(_ context.Context, r slog.Record) error {
	line := "mcpmock: " + r.Message + "\n"
	if h.color {
		if c := colorOf(r); c != "" {
			line = c + "mcpmock: " + r.Message + "\x1b[0m\n"
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// colorOf is the colour of a record's line: red for a warning or an
// error, cyan for a message of the client, green for one of the server.
func colorOf(r slog.Record) string {
	if r.Level >= slog.LevelWarn {
		return "\x1b[31m"
	}
	c := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "dir" {
			return true
		}
		c = "\x1b[32m"
		if a.Value.String() == dirName(ToServer) {
			c = "\x1b[36m"
		}
		return false
	})
	return c
}

func (h *TextHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *TextHandler) WithGroup(string) slog.Handler      { return h }

// Off reports whether l logs nothing that Message or Raw would log (nil,
// Discard, or a level above warnings), so that a caller can skip the work
// of preparing a message for it.
func Off(l *slog.Logger) bool {
	return l == nil || !l.Enabled(context.Background(), slog.LevelWarn)
}

// Discard is a logger that writes nothing.
var Discard = slog.New(slog.DiscardHandler)
