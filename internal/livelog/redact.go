package livelog

import (
	"context"
	"log/slog"

	"github.com/mcpmock/mcpmock/cassettes"
)

// The live log hides what the cassette hides, by the same rules
// (cassettes.Redactor): the values of secret-named members
// (cassettes.SecretMember), the patterns of token formats, and literal
// values. A logger made by Redacting carries the rules of one recording,
// its user rules and its --forbid values included, and hides them in every
// line and attribute; any other logger hides what the default rules know.

// Redacting returns a logger that writes to l's handler, with what rd
// knows replaced by cassettes.Redacted in each message and attribute. The
// lines of Message and Raw are redacted before they are shortened, so that
// no secret is shown in part.
func Redacting(l *slog.Logger, rd *cassettes.Redactor) *slog.Logger {
	return slog.New(&redactHandler{next: l.Handler(), rd: rd, local: rd.Local(lineMembers...)})
}

// redactorOf returns the rules of l's lines.
func redactorOf(l *slog.Logger) *cassettes.Redactor {
	if h, ok := l.Handler().(*redactHandler); ok {
		return h.rd
	}
	return cassettes.DefaultRedactor()
}

// redactHandler hides secrets in the records it passes on to next.
type redactHandler struct {
	next slog.Handler
	rd   *cassettes.Redactor
	// local is lineRules.local of rd.
	local bool
}

// TakesMessages passes on what the next handler asks (Viewer).
func (h *redactHandler) TakesMessages() bool {
	v, ok := h.next.(Viewer)
	return ok && v.TakesMessages()
}

func (h *redactHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	msg, _ := h.rd.RedactText(r.Message)
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(out), rd: h.rd, local: h.local}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(name), rd: h.rd, local: h.local}
}

// attr redacts the text of an attribute: strings, errors and groups.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s, n := h.rd.RedactText(v.String()); n > 0 {
			return slog.String(a.Key, s)
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			s, _ := h.rd.RedactText(err.Error())
			return slog.String(a.Key, s)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
