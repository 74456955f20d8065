package view

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// Live is the model of traffic as it passes (record --ui, replay --ui):
// it is a slog.Handler that sits in front of the live log's handler, takes
// each message whole from the log record (livelog hands the messages to a
// handler that asks for them, redacted as the log line is) and passes the
// record on. Its Handler serves the page with the messages so far, and tells
// the page when more came.
type Live struct {
	next slog.Handler // the live log's own handler
	m    *liveModel
}

// liveModel is what every Live of one view shares (WithAttrs copies).
type liveModel struct {
	mu      sync.Mutex // guards b and changed
	b       *builder
	start   time.Time
	changed chan struct{} // closed at the next message
}

// NewLive returns a Live named name (the cassette, say) in front of next;
// nil next is a handler that writes nothing.
func NewLive(name string, next slog.Handler) *Live {
	if next == nil {
		next = slog.DiscardHandler
	}
	m := &liveModel{b: &builder{doc: &Document{Name: name, Sessions: []Session{}, Messages: []Message{}, Tools: []ToolList{}}, session: -1},
		start: time.Now(), changed: make(chan struct{})}
	return &Live{next: next, m: m}
}

// TakesMessages says that the live log should hand Live each message
// whole (livelog.Viewer).
func (l *Live) TakesMessages() bool { return true }

// Enabled is true: Live takes every message, whatever the log shows.
func (l *Live) Enabled(context.Context, slog.Level) bool { return true }

// Handle adds the record's message to the model and passes the record,
// without the message, to the live log's handler.
func (l *Live) Handle(ctx context.Context, r slog.Record) error {
	var from, kind, note string
	var raw json.RawMessage
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case livelog.MessageKey:
			raw, _ = a.Value.Any().(json.RawMessage)
			return true
		case livelog.NoteKey:
			note = a.Value.String()
			return true
		case "dir":
			from = a.Value.String()
		case "kind":
			kind = a.Value.String()
		}
		out.AddAttrs(a)
		return true
	})
	if from != "" && (raw != nil || kind == "raw") {
		l.add(from, raw, r.Message, note, r.Time)
	}
	if l.next.Enabled(ctx, r.Level) {
		return l.next.Handle(ctx, out)
	}
	return nil
}

func (l *Live) WithAttrs(as []slog.Attr) slog.Handler {
	return &Live{next: l.next.WithAttrs(as), m: l.m}
}

func (l *Live) WithGroup(name string) slog.Handler {
	return &Live{next: l.next.WithGroup(name), m: l.m}
}

// add puts one message into the model.
func (l *Live) add(dir string, raw json.RawMessage, line, note string, at time.Time) {
	from := cassettes.FromServer
	if strings.HasPrefix(dir, "client") {
		from = cassettes.FromClient
	}
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := cassettes.Millis(float64(at.Sub(m.start)) / float64(time.Millisecond))
	n := len(m.b.doc.Messages)
	if raw != nil {
		m.b.message(0, from, ms, 0, append(json.RawMessage(nil), raw...), nil, nil)
	} else {
		text := line
		m.b.message(0, from, ms, 0, nil, &text, nil)
	}
	if len(m.b.doc.Messages) > n {
		m.b.doc.Messages[n].Note = note
	}
	close(m.changed)
	m.changed = make(chan struct{})
}

// Document returns the model so far (a copy).
func (l *Live) Document() *Document {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	d := *m.b.doc
	// Copies that are never nil: the page reads [] where there is none.
	d.Messages = append(make([]Message, 0, len(d.Messages)), d.Messages...)
	d.Sessions = append(make([]Session, 0, len(d.Sessions)), d.Sessions...)
	d.Tools = append(make([]ToolList, 0, len(d.Tools)), d.Tools...)
	return &d
}

// next returns how many messages there are and a channel closed at the
// next one.
func (m *liveModel) next() (int, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.b.doc.Messages), m.changed
}

// Handler serves the page of the live traffic: the same page and JSON API
// as Handler, the one cassette being the traffic so far, and
//
//	GET /api/events          an event stream: an event "messages" with the
//	                         count whenever messages came (at most 4 a second)
//
// which the page follows, fetching the model again.
func (l *Live) Handler() http.Handler {
	mux := http.NewServeMux()
	docs := func() Cassettes { return Cassettes{l.Document()} }
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { page(w) })
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) { asset(w, "app.js", "text/javascript; charset=utf-8") })
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) { asset(w, "app.css", "text/css; charset=utf-8") })
	mux.HandleFunc("GET /api/cassettes", func(w http.ResponseWriter, r *http.Request) {
		e := docs().entries()
		e[0].Live = true
		writeJSON(w, e)
	})
	mux.HandleFunc("GET /api/cassettes/{n}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("n") != "0" {
			http.Error(w, fmt.Sprintf("no cassette %q: the live view has one, 0", r.PathValue("n")), http.StatusNotFound)
			return
		}
		writeJSON(w, l.Document())
	})
	mux.HandleFunc("GET /api/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		flusher, _ := w.(http.Flusher)
		sent := -1
		for {
			n, changed := l.m.next()
			if n != sent {
				fmt.Fprintf(w, "event: messages\ndata: %d\n\n", n)
				if flusher != nil {
					flusher.Flush()
				}
				sent = n
			}
			select {
			case <-r.Context().Done():
				return
			case <-changed:
			}
			select { // coalesce: at most four events a second
			case <-r.Context().Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	return secure(mux)
}
