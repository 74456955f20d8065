// Package livelog turns JSON-RPC messages into the live log lines that
// mcpmock writes to stderr: one readable line per message (direction, id,
// method, tool, short arguments, latency, errors marked), carried by log/slog
// so that the command line can pick a text or a JSON handler.
package livelog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
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
	MessageLike(l, dir, msg, latency, note, nil)
}

// MessageLike is Message for a message that differs only by its id from
// every other that is logged with memo (not nil): a response replayed
// under the id of each call, or a request that matched as it was
// recorded. What the line shows past the id is made once, for the first,
// and kept in memo; Like writes the others' lines from it.
func MessageLike(l *slog.Logger, dir string, msg *jsonrpc.Message, latency time.Duration, note string, memo *Memo) {
	if l == nil || !l.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	if h, rules := textHandlerOf(l); h != nil {
		h.message(rules, dir, msg, latency, note, memo)
		return
	}
	rd := redactorOf(l)
	msg = redactMessage(rd, msg)
	line, level, attrs := describeRedacted(rd, dir, msg, latency, note)
	if v, ok := l.Handler().(Viewer); ok && v.TakesMessages() {
		attrs = append(attrs, slog.Any(MessageKey, msg.Raw), slog.String(NoteKey, note))
	}
	l.LogAttrs(context.Background(), level, line, attrs...)
}

// textHandlerOf returns the TextHandler that l writes to, itself or behind
// Redacting, with the rules of its lines; nil for any other handler. A text
// handler shows the line alone, so Message writes it straight, without the
// attributes and the record that the other handlers need: the log of every
// message a tap forwards or a replay answers costs that much less.
func textHandlerOf(l *slog.Logger) (*TextHandler, lineRules) {
	switch h := l.Handler().(type) {
	case *TextHandler:
		return h, h.rules
	case *redactHandler:
		if t, ok := h.next.(*TextHandler); ok {
			return t, lineRules{rd: h.rd, again: true, local: h.local}
		}
	}
	return nil, lineRules{}
}

// lineRules are the rules that a text handler's lines are redacted by.
type lineRules struct {
	rd *cassettes.Redactor
	// again says that the handler in front redacts each record's text
	// again (Redacting).
	again bool
	// local says that rd hides the same in what a line shows of a message
	// redacted apart as in the whole message (cassettes.Redactor.Local).
	local bool
}

// lineMembers are the members on the way to what a line shows of a message
// (appendLine).
var lineMembers = []string{"id", "params", "name", "arguments", "error", "message", "result", "content", "text", "type", "mimeType", "isError"}

// defaultLocal is lineRules.local of the default rules.
var defaultLocal = sync.OnceValue(func() bool { return cassettes.DefaultRedactor().Local(lineMembers...) })

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
	return describe(cassettes.DefaultRedactor(), dir, msg, latency, note)
}

// describe is Describe by the rules of rd: the message is redacted first,
// as a cassette would hold it, then described.
func describe(rd *cassettes.Redactor, dir string, msg *jsonrpc.Message, latency time.Duration, note string) (string, slog.Level, []slog.Attr) {
	return describeRedacted(rd, dir, redactMessage(rd, msg), latency, note)
}

// describeRedacted is describe of a message that rd has redacted already.
func describeRedacted(rd *cassettes.Redactor, dir string, msg *jsonrpc.Message, latency time.Duration, note string) (string, slog.Level, []slog.Attr) {
	line, level := appendLine(nil, shown{rd: rd, whole: true}, dir, msg, latency, note)
	attrs := []slog.Attr{slog.String("dir", dirName(dir)), slog.String("kind", msg.Kind().String())}
	if !msg.ID.IsZero() {
		attrs = append(attrs, slog.String("id", string(msg.ID)))
	}
	switch msg.Kind() {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		attrs = append(attrs, slog.String("method", msg.Method))
		if tool, args := toolCall(msg); tool != "" {
			attrs = append(attrs, slog.String("tool", strings.Clone(tool)), slog.String("args", string(appendShort(nil, rd, args, 200))))
		}
	case jsonrpc.KindResponse:
		if msg.Error != nil {
			attrs = append(attrs, slog.Int("error", msg.Error.Code), slog.String("message", msg.Error.Message))
		} else if _, isErr := toolError(msg.Result); isErr {
			attrs = append(attrs, slog.Bool("isError", true))
		}
	}
	if latency > 0 {
		attrs = append(attrs, slog.Float64("latencyMs", float64(latency.Microseconds())/1000))
	}
	if note != "" {
		attrs = append(attrs, slog.String("note", note))
	}
	return string(line), level, attrs
}

// appendLine appends the log line of msg, its secrets hidden by sh, and
// returns its level (warnings for errors).
func appendLine(b []byte, sh shown, dir string, msg *jsonrpc.Message, latency time.Duration, note string) ([]byte, slog.Level) {
	b = appendHead(b, sh, dir, msg.ID)
	b, level := appendBody(b, sh, msg)
	return appendTail(b, latency, note), level
}

// appendHead appends the start of a line: the direction and the id.
func appendHead(b []byte, sh shown, dir string, id jsonrpc.ID) []byte {
	b = append(b, dir...)
	if !id.IsZero() {
		b = append(b, ' ')
		b = sh.appendID(b, id)
	}
	return b
}

// appendBody appends what a line shows of msg past its id (a Memo keeps
// it), and returns the line's level.
func appendBody(b []byte, sh shown, msg *jsonrpc.Message) ([]byte, slog.Level) {
	level := slog.LevelInfo
	switch msg.Kind() {
	case jsonrpc.KindRequest, jsonrpc.KindNotification:
		b = append(b, ' ')
		b = append(b, msg.Method...)
		if tool, args := toolCall(msg); tool != "" {
			b = append(b, ' ')
			b = append(b, sh.text(tool)...)
			b = append(b, ' ')
			b = appendShort(b, sh.rd, sh.value(args), 80)
		} else if msg.Method != "tools/call" && len(msg.Params) > 0 && !strings.HasPrefix(msg.Method, "notifications/") {
			at := len(b)
			b = appendShort(append(b, ' '), sh.rd, sh.value(withoutMeta(msg.Params)), 60)
			if string(b[at+1:]) == "{}" {
				b = b[:at]
			}
		}
	case jsonrpc.KindResponse:
		if msg.Error != nil {
			level = slog.LevelWarn
			b = append(b, " ✗ error "...)
			b = strconv.AppendInt(b, int64(msg.Error.Code), 10)
			b = append(b, ": "...)
			b = append(b, firstLine(sh.text(msg.Error.Message))...)
		} else if text, isErr := toolError(msg.Result); isErr {
			level = slog.LevelWarn
			b = append(b, " ✗ tool error: "...)
			b = shorten(cassettefile.AppendQuotedHTML(b, sh.text(text)), len(b), sh.rd, 80)
		} else {
			b = appendSummary(append(b, " result "...), sh, msg.Result)
		}
	default:
		b = appendShort(append(b, " invalid message "...), sh.rd, sh.message(msg.Raw), 80)
	}
	return b, level
}

// appendTail appends the end of a line: the latency and the note.
func appendTail(b []byte, latency time.Duration, note string) []byte {
	if latency > 0 {
		b = append(b, " ("...)
		b = append(b, roundLatency(latency).String()...)
		b = append(b, ')')
	}
	if note != "" {
		b = append(b, " ["...)
		b = append(b, note...)
		b = append(b, ']')
	}
	return b
}

// shown hides the secrets of what a line shows of a message, by the rules
// of rd. A message redacted whole already (redactMessage) holds none that
// rd knows (whole). Else (a text log, by rules local to the members that
// lead to what a line shows: lineMembers) each part is redacted apart: a
// line shows a few short parts of a message, where every request of the
// 2026-07-28 era repeats the client's capabilities, and most messages hold
// no secret to find. Each part is cut (shorten) and its text checked after
// all the same.
type shown struct {
	rd    *cassettes.Redactor
	whole bool
}

// text returns the string t with its secrets hidden.
func (sh shown) text(t string) string {
	if sh.whole {
		return t
	}
	out, n := sh.rd.RedactText(t)
	if n > 0 {
		// As the message's redaction writes the string again (each byte
		// that is no UTF-8 as U+FFFD) and the line reads it back.
		if s, ok := jsonrpc.Unquote(cassettefile.AppendQuoted(nil, out)); ok {
			out = s
		}
	}
	return out
}

// value returns the JSON value raw, a member of the message, with its
// secrets hidden.
func (sh shown) value(raw []byte) []byte {
	if sh.whole || len(raw) == 0 {
		return raw
	}
	out, _ := sh.rd.RedactValue(raw)
	return out
}

// message returns the message raw with its secrets hidden.
func (sh shown) message(raw []byte) []byte {
	if sh.whole || len(raw) == 0 {
		return raw
	}
	out, _ := sh.rd.RedactJSON(raw)
	return out
}

// appendID appends a message's id, a string with its secrets hidden.
func (sh shown) appendID(b []byte, id jsonrpc.ID) []byte {
	if !sh.whole && len(id) > 0 && id[0] == '"' {
		if s, ok := jsonrpc.UnquoteView(unsafe.Slice(unsafe.StringData(string(id)), len(id))); ok {
			if out, n := sh.rd.RedactText(s); n > 0 {
				return cassettefile.AppendQuoted(b, out)
			}
		}
	}
	return append(b, id...)
}

// Raw logs a line that is not JSON-RPC.
func Raw(l *slog.Logger, dir string, line []byte, why string) {
	if l == nil {
		return
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, fmt.Sprintf("%s ✗ not JSON-RPC (%s): %s", dir, why, appendShort(nil, redactorOf(l), line, 80)),
		slog.String("dir", dirName(dir)), slog.String("kind", "raw"), slog.String("error", why))
}

// redactMessage returns msg with its secrets hidden by rd; msg itself when
// there are none. The whole message is redacted, as the cassette's copy
// is: the rules' paths (--redact-path) are paths into each message
// ("params.arguments.ssn"), which its params alone would not hold. A
// message whose redaction no longer parses (which a redaction does not
// make) is shown as an invalid message, its redacted text whole. Every
// parsed message holds its Raw, which is what is redacted.
func redactMessage(rd *cassettes.Redactor, msg *jsonrpc.Message) *jsonrpc.Message {
	raw, n := rd.RedactJSON(msg.Raw)
	if n == 0 {
		return msg
	}
	m, err := jsonrpc.Parse(raw)
	if err != nil {
		return &jsonrpc.Message{Raw: raw}
	}
	return m
}

func dirName(dir string) string {
	if dir == ToServer {
		return "client→server"
	}
	return "server→client"
}

// The log reads the few members it shows straight from the raw JSON; where
// a member has a type that encoding/json would refuse to decode into the
// field the log shows it as (a tool name that is a number), the log treats
// the message as encoding/json failing would: the member is not shown.

// toolCall returns the tool and arguments of a tools/call request ("{}"
// for none); "" when it names no tool.
func toolCall(msg *jsonrpc.Message) (tool string, args json.RawMessage) {
	if msg.Method != "tools/call" || !isObject(msg.Params) {
		return "", nil
	}
	ok := true
	jsonrpc.EachMemberRaw(msg.Params, func(key, value []byte) error {
		switch {
		case jsonrpc.NameIs(key, "name"):
			tool, ok = stringOrNull(value, ok)
		case jsonrpc.NameIs(key, "arguments"):
			args = value
		}
		return nil
	})
	if !ok || tool == "" {
		return "", nil
	}
	if args == nil {
		args = json.RawMessage("{}")
	}
	return tool, args
}

// toolError returns the first text of a tool result that is an error
// ({"isError":true}).
func toolError(result json.RawMessage) (string, bool) {
	if !bytes.Contains(result, []byte(`"isError"`)) || !isObject(result) {
		return "", false
	}
	isErr, ok := false, true
	var text string
	jsonrpc.EachMemberRaw(result, func(key, value []byte) error {
		switch {
		case jsonrpc.NameIs(key, "isError"):
			switch string(value) {
			case "true":
				isErr = true
			case "false", "null":
				isErr = false
			default:
				ok = false
			}
		case jsonrpc.NameIs(key, "content"):
			text = ""
			first := true
			ok = eachBlock(value, ok, func(b block) bool {
				if first {
					text, first = b.text, false
				}
				return b.textOK
			})
		}
		return nil
	})
	if !ok || !isErr {
		return "", false
	}
	return text, true
}

// appendSummary appends a result shortened for the log: the content of a
// tool result, anything else without its _meta.
func appendSummary(b []byte, sh shown, result json.RawMessage) []byte {
	var few [4]block
	blocks := few[:0]
	ok := isObject(result) || string(result) == "null"
	if ok && isObject(result) {
		jsonrpc.EachMemberRaw(result, func(key, value []byte) error {
			if jsonrpc.NameIs(key, "content") {
				blocks = blocks[:0]
				ok = eachBlock(value, ok, func(b block) bool {
					blocks = append(blocks, b)
					return b.textOK && b.typeOK
				})
			}
			return nil
		})
	}
	if !ok || len(blocks) == 0 {
		return appendShort(b, sh.rd, sh.value(withoutMeta(result)), 60)
	}
	for i, c := range blocks {
		if i > 0 {
			b = append(b, ", "...)
		}
		if c.typ == "text" {
			b = shorten(cassettefile.AppendQuotedHTML(b, sh.text(c.text)), len(b), sh.rd, 60)
		} else {
			b = append(b, strings.TrimSpace(sh.text(c.typ)+" "+sh.text(c.mimeType))...)
		}
	}
	return b
}

// A block is one element of a result's content, as the log shows it.
type block struct {
	typ, text, mimeType string
	// textOK and typeOK are false when text, or type or mimeType, is
	// neither a string nor null.
	textOK, typeOK bool
}

// eachBlock calls f with each block of the content array raw, while ok and
// f return true, and returns whether all went well: raw is an array (or
// null) of objects (or nulls).
func eachBlock(raw []byte, ok bool, f func(block) bool) bool {
	if !ok || string(raw) == "null" {
		return ok
	}
	err := jsonrpc.EachElement(raw, func(value []byte) error {
		b := block{textOK: true, typeOK: true}
		switch {
		case string(value) == "null":
		case !isObject(value):
			return errBadContent
		default:
			jsonrpc.EachMemberRaw(value, func(key, v []byte) error {
				switch {
				case jsonrpc.NameIs(key, "type"):
					b.typ, b.typeOK = stringOrNull(v, b.typeOK)
				case jsonrpc.NameIs(key, "text"):
					b.text, b.textOK = stringOrNull(v, b.textOK)
				case jsonrpc.NameIs(key, "mimeType"):
					b.mimeType, b.typeOK = stringOrNull(v, b.typeOK)
				}
				return nil
			})
		}
		if !f(b) {
			return errBadContent
		}
		return nil
	})
	return err == nil
}

var errBadContent = errors.New("content the log does not read")

// stringOrNull returns the string that the JSON value raw holds ("" for
// null), and ok unless raw is neither. A string without escapes shares
// raw's bytes: it is to be used (appended to a line) while raw is
// unchanged, and copied to be kept.
func stringOrNull(raw []byte, ok bool) (string, bool) {
	if string(raw) == "null" {
		return "", ok
	}
	s, isString := jsonrpc.UnquoteView(raw)
	return s, ok && isString
}

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

func withoutMeta(params json.RawMessage) json.RawMessage {
	out, err := jsonrpc.DeleteMember(params, "_meta")
	if err != nil {
		return params
	}
	return out
}

// appendShort appends raw compacted and cut to max runes, with the values
// and patterns of rd hidden before it is cut.
func appendShort(b []byte, rd *cassettes.Redactor, raw []byte, max int) []byte {
	return shorten(appendCompact(b, raw), len(b), rd, max)
}

// shorten cuts b[start:] to max runes, with the values and patterns of rd
// hidden before it is cut.
func shorten(b []byte, start int, rd *cassettes.Redactor, max int) []byte {
	// Redact before cutting, with some room, so that no secret is shown
	// in part; not the whole of a long message, to keep logging cheap.
	cut := false
	if len(b)-start > 4*max+256 {
		b, cut = b[:start+4*max+256], true
	}
	if len(b) > start {
		// RedactText keeps nothing of the text it reads, and returns a
		// new string when it hides something: b can be read in place.
		if s, n := rd.RedactText(unsafe.String(&b[start], len(b)-start)); n > 0 {
			b = append(b[:start], s...)
		}
	}
	s, i := b[start:], 0
	for n := 0; i < len(s) && n < max; n++ {
		_, size := utf8.DecodeRune(s[i:])
		i += size
	}
	if i == len(s) && !cut {
		return b
	}
	if utf8.Valid(s[:i]) {
		b = b[:start+i]
	} else { // each byte that is no UTF-8 shown as U+FFFD
		b = append(b[:start], string([]rune(string(s[:i])))...)
	}
	return append(b, "…"...)
}

// appendCompact appends raw without the white space outside its strings,
// or as it is when it is not JSON.
func appendCompact(b, raw []byte) []byte {
	if out, ok := jsonrpc.AppendCompactDocument(b, raw); ok {
		return out
	}
	return append(b, raw...)
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
	out   *textOut
	color bool
	batch bool // the lines of messages wait for those that follow (Batched)
	// rules are the default rules of its lines, looked up once and not
	// for each line (two sync.OnceValue calls).
	rules lineRules
}

// NewTextHandler returns a TextHandler writing to w, each line at once.
func NewTextHandler(w io.Writer) *TextHandler {
	return &TextHandler{out: &textOut{w: w}, rules: lineRules{rd: cassettes.DefaultRedactor(), local: defaultLocal()}}
}

// Colored returns h writing in colour, for a terminal: warnings and errors
// red, the client's messages cyan, the server's green (the colours of
// mcpmock cassette show).
func (h *TextHandler) Colored() *TextHandler {
	c := *h
	c.color = true
	return &c
}

// Batched returns h writing the lines of messages (Message) in batches:
// a line waits at most lineDelay for those that follow, and goes with them
// in one write. Any other record (a warning, a summary, a URL) is written
// at once, after every line that waits in this process (FlushAll), as is
// a Gate's question. A call through a tap or a replay logs two lines, and
// their writes (each waking whoever reads stderr) were a third of what a
// replayed call cost with the log on. Lines that wait when the process is
// killed are lost: at most lineDelay of them; FlushAll writes them.
func (h *TextHandler) Batched() *TextHandler {
	c := *h
	c.batch = true
	return &c
}

func (h *TextHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *TextHandler) Handle(_ context.Context, r slog.Record) error {
	color := ""
	if h.color {
		color = colorOf(r)
	}
	FlushAll()
	return addLine(h.out, color, r.Message, false)
}

// lineBufs are the buffers that the coloured lines of messages are made
// in, before their colour is known.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// message writes the line of a message, redacted by rules, and keeps
// what it shows past the id in memo (when not nil) or writes that from it.
func (h *TextHandler) message(rules lineRules, dir string, msg *jsonrpc.Message, latency time.Duration, note string, memo *Memo) error {
	if !rules.memoizes() {
		memo = nil
	}
	if m := memo.line(rules.rd); m != nil {
		return h.like(rules, dir, msg.ID, m, latency, note)
	}
	sh := shown{rd: rules.rd, whole: !rules.local}
	if sh.whole {
		msg = redactMessage(rules.rd, msg)
	}
	return h.write(rules, dir, func(b []byte) ([]byte, slog.Level) {
		b = appendHead(b, sh, dir, msg.ID)
		at := len(b)
		b, level := appendBody(b, sh, msg)
		memo.keep(rules.rd, b[at:], level)
		return appendTail(b, latency, note), level
	})
}

// like writes the line of a message with the id id, its body from m.
func (h *TextHandler) like(rules lineRules, dir string, id jsonrpc.ID, m *memoLine, latency time.Duration, note string) error {
	return h.write(rules, dir, func(b []byte) ([]byte, slog.Level) {
		b = append(appendHead(b, shown{rd: rules.rd}, dir, id), m.body...)
		return appendTail(b, latency, note), m.level
	})
}

// write writes the line that line appends, redacted again by rules. A
// line without colour is made where it waits to be written, under the
// lock of what writes it, with no buffer of its own to get and copy from.
func (h *TextHandler) write(rules lineRules, dir string, line func([]byte) ([]byte, slog.Level)) error {
	if h.color {
		buf := lineBufs.Get().(*[]byte)
		b, level := line((*buf)[:0])
		b = rules.redactAgain(b, 0)
		err := addLine(h.out, colorFor(level, dir), b, h.batch)
		if cap(b) <= 64<<10 {
			*buf = b
			lineBufs.Put(buf)
		}
		return err
	}
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waiting = append(o.waiting, "mcpmock: "...)
	start := len(o.waiting)
	o.waiting, _ = line(o.waiting)
	o.waiting = rules.redactAgain(o.waiting, start)
	return o.endLineLocked(h.batch)
}

// redactAgain hides the secrets of b[start:], a line, when the handler in
// front redacts each record's text again (Redacting). It reads the line in
// place, as shorten does.
func (rules lineRules) redactAgain(b []byte, start int) []byte {
	if !rules.again || len(b) == start {
		return b
	}
	if s, n := rules.rd.RedactText(unsafe.String(&b[start], len(b)-start)); n > 0 {
		b = append(b[:start], s...)
	}
	return b
}

// colorOf is the colour of a record's line: red for a warning or an
// error, cyan for a message of the client, green for one of the server,
// none for a line that is no message.
func colorOf(r slog.Record) string {
	if r.Level >= slog.LevelWarn {
		return colorFor(r.Level, "")
	}
	c := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "dir" {
			return true
		}
		dir := ToClient
		if a.Value.String() == dirName(ToServer) {
			dir = ToServer
		}
		c = colorFor(r.Level, dir)
		return false
	})
	return c
}

// colorFor is the colour of the line of a message sent in direction dir.
func colorFor(level slog.Level, dir string) string {
	switch {
	case level >= slog.LevelWarn:
		return "\x1b[31m"
	case dir == ToServer:
		return "\x1b[36m"
	}
	return "\x1b[32m"
}

func (h *TextHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *TextHandler) WithGroup(string) slog.Handler      { return h }

// Off reports whether l logs nothing that Message or Raw would log (nil,
// Discard, or a level above warnings), so that a caller can skip the work
// of preparing a message for it.
func Off(l *slog.Logger) bool {
	return l == nil || !l.Enabled(context.Background(), slog.LevelWarn)
}

// KeepsNothing reports whether l keeps nothing of a message that Message or
// Raw logs past the call (nil, Discard, or the text log, which writes the
// line at once), so that a caller may use the message's memory again; the
// other handlers keep records (the web view's) or may.
func KeepsNothing(l *slog.Logger) bool {
	if Off(l) {
		return true
	}
	h, _ := textHandlerOf(l)
	return h != nil
}

// Discard is a logger that writes nothing.
var Discard = slog.New(slog.DiscardHandler)
