package livelog

import (
	"context"
	"encoding/json"
	"log/slog"
)

// KindWarning is the "kind" attribute of a Warning record.
const KindWarning = "warning"

// Warning logs, at Warn level, a warning of mcpmock's own about a message
// that passed (a protocol-contract check of the tap): the line is
// "⚠ what: text", with the attributes kind (KindWarning), check (what),
// side ("client→server" or "server→client": the sender of the message the
// warning is about) and NoteKey ("what: text"). A Viewer also gets the
// message (nil for none) as MessageKey, redacted as the line is, so that it
// can attach the warning to the message it shows.
// The record has no "dir" attribute: it is not a message of its own.
func Warning(l *slog.Logger, dir string, msg json.RawMessage, what, text string) {
	if l == nil || !l.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	rd := redactorOf(l)
	text, _ = rd.RedactText(text)
	note := what + ": " + text
	attrs := []slog.Attr{slog.String("kind", KindWarning), slog.String("check", what),
		slog.String("side", dirName(dir)), slog.String(NoteKey, note)}
	if v, ok := l.Handler().(Viewer); ok && v.TakesMessages() {
		var full json.RawMessage
		if msg != nil {
			full, _ = rd.RedactJSON(msg)
		}
		attrs = append(attrs, slog.Any(MessageKey, full))
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, "⚠ "+note, attrs...)
}
