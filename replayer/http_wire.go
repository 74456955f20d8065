package replayer

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// Error codes of the 2026-07-28 transport (SEP-2575, SEP-2243).
const (
	// CodeHeaderMismatch answers a request whose Mcp-Method, Mcp-Name or
	// MCP-Protocol-Version header is missing or differs from its body.
	CodeHeaderMismatch = -32020
	// CodeUnsupportedProtocolVersion answers a request for a protocol
	// version that the server does not speak.
	CodeUnsupportedProtocolVersion = -32022
)

// sseWriter writes Server-Sent Events to an HTTP response, flushing each
// event. It is safe for concurrent use.
type sseWriter struct {
	mu  sync.Mutex // guards w and ids
	w   http.ResponseWriter
	rc  http.ResponseController // a value: one allocation less an event stream
	ids []string                // recorded event ids to reuse, in order
	err error
}

// newSSEWriter starts an event stream and sends its headers at once.
func newSSEWriter(w http.ResponseWriter, ids []string) *sseWriter {
	return openSSE(w, ids, true)
}

// openSSE starts an event stream; without flush its headers go with the
// first event, in one write (for an answer whose first event is ready).
func openSSE(w http.ResponseWriter, ids []string, flush bool) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: *http.NewResponseController(w), ids: ids}
	if flush {
		s.rc.Flush()
	}
	return s
}

// event writes one event; data may hold newlines (each becomes a data line).
func (s *sseWriter) event(name string, data []byte) error {
	return s.next(name, data, true)
}

// last writes the stream's last event without flushing it: the handler
// returns next, and the server sends it with the end of the response, in
// one write.
func (s *sseWriter) last(name string, data []byte) error {
	return s.next(name, data, false)
}

// next writes an event with the next recorded event id, if any.
func (s *sseWriter) next(name string, data []byte, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	id := ""
	if len(s.ids) > 0 {
		id, s.ids = s.ids[0], s.ids[1:]
	}
	return s.write(id, name, data, flush)
}

// eventID writes one event with the given id.
func (s *sseWriter) eventID(id, name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return s.write(id, name, data, true)
}

// eventBufs holds the buffers events are framed in: the response copies
// what it is given, so one buffer serves event after event.
var eventBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledEvent = 64 << 10

// write writes an event, and flushes it if flush; s.mu is held.
func (s *sseWriter) write(id, name string, data []byte, flush bool) error {
	bp := eventBufs.Get().(*[]byte)
	defer eventBufs.Put(bp)
	b := (*bp)[:0]
	// An id that would break the framing is not written: a cassette that
	// was loaded cannot hold one (cassettes refuses it), one built in Go
	// may, and its event goes without the id rather than inject another.
	if jsonrpc.CheckEventID(id) != nil {
		id = ""
	}
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		b = append(append(append(b, "data: "...), bytes.TrimSuffix(line, []byte("\r"))...), '\n')
	}
	b = append(b, '\n')
	if *bp = b; cap(b) > maxPooledEvent {
		*bp = nil // a large event's buffer is not kept for small ones
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	if flush {
		s.err = s.rc.Flush()
	}
	return s.err
}

// comment writes an SSE comment (a keep-alive).
func (s *sseWriter) comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write([]byte(": " + text + "\n\n")); err != nil {
		s.err = err
		return err
	}
	s.err = s.rc.Flush()
	return s.err
}

// accepts reports whether the Accept headers allow JSON and an event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

func mediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// writeRPCError answers an HTTP error whose body is a JSON-RPC error
// response (with no id when id is "").
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int, message string, data any) {
	e := &jsonrpc.Error{Code: code, Message: message}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	if id == "" {
		id = "null"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.ErrorResponse(id, e))
}

// logSend logs a message sent to the client, with the latency of a
// response and a note.
func (e *Engine) logSend(raw []byte, latency time.Duration, note string) {
	e.logSendLike(raw, latency, note, nil, "")
}

// logSendLike is logSend of raw, which differs only by its id, id, from
// the other messages logged with memo (livelog.MessageLike), when memo is
// not nil: its line is then made from memo, without reading raw.
func (e *Engine) logSendLike(raw []byte, latency time.Duration, note string, memo *livelog.Memo, id jsonrpc.ID) {
	if livelog.Off(e.opts.Logger) {
		return // not parsed for nothing: --quiet
	}
	if memo != nil && livelog.Like(e.opts.Logger, livelog.ToClient, id, latency, note, memo) {
		return
	}
	m := logParses.Get().(*jsonrpc.Message)
	parse := jsonrpc.ParseInto
	if livelog.KeepsNothing(e.opts.Logger) { // else it may be kept: left to the collector
		parse = jsonrpc.ParseViewInto // the line is written before Message returns
		defer func() {
			*m = jsonrpc.Message{}
			logParses.Put(m)
		}()
	}
	if err := parse(m, raw); err == nil {
		livelog.MessageLike(e.opts.Logger, livelog.ToClient, m, latency, note, memo)
	} else {
		if note == "" {
			note = "as recorded or scripted"
		}
		livelog.Raw(e.opts.Logger, livelog.ToClient, raw, note)
	}
}

// logParses are the parses of what logSend logs, used again when the log
// keeps nothing of them.
var logParses = sync.Pool{New: func() any { return new(jsonrpc.Message) }}

// streams reports whether a plan sends anything before its response (then
// the answer must be an event stream).
func (p *answerPlan) streams() bool {
	for _, st := range p.Steps {
		if st.Kind == stepListen {
			return true
		}
		if st.Kind == stepSend && (st.inline || !st.Notify && !st.unsolicited) {
			return !st.Response
		}
	}
	return false
}

// responseOf returns the response message of a plan.
func (p *answerPlan) response() []byte {
	for _, st := range p.Steps {
		if st.Kind == stepSend && st.Response {
			return st.Message
		}
	}
	return nil
}
