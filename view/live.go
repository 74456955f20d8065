package view

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// Live is the model of traffic as it passes (record --ui, replay --ui,
// run --ui): it is a slog.Handler that sits in front of the live log's
// handler, takes each message whole from the log record (livelog hands the
// messages to a handler that asks for them, redacted as the log line is)
// and passes the record on. A record that is no message (a warning, the
// explanation of a miss) becomes a note of mcpmock's lane. Its Board serves
// the page with the messages so far, and tells the page when more came.
type Live struct {
	next slog.Handler // the live log's own handler
	m    *liveModel
}

// liveModel is what every Live of one view shares (WithAttrs copies).
type liveModel struct {
	board *Board
	mu    sync.Mutex // guards b and the replay's
	b     *builder
	start time.Time
	// recorded and unused are the cassette a replay answers from and what
	// of it no client used so far (Replaying).
	recorded map[int]Recorded
	unused   func() []int
	name     string // of the recorded cassette on the board
}

// NewLive returns a Live named name (the cassette, say) in front of next,
// on a board of its own; nil next is a handler that writes nothing.
func NewLive(name string, next slog.Handler) *Live {
	return NewBoard().Live(name, next)
}

// A Board is the web view of live traffic: a Live per cassette served
// (mcpmock run serves several), and the recorded cassettes beside them.
type Board struct {
	mu      sync.Mutex // guards lives, docs and changed
	lives   []*Live
	docs    Cassettes
	changed chan struct{} // closed at the next message
}

// NewBoard returns an empty board.
func NewBoard() *Board { return &Board{changed: make(chan struct{})} }

// Live adds the live traffic of one cassette, named name, in front of the
// live log's handler next (nil: one that writes nothing).
func (b *Board) Live(name string, next slog.Handler) *Live {
	if next == nil {
		next = slog.DiscardHandler
	}
	l := &Live{next: next, m: &liveModel{board: b, b: newBuilder(name), start: time.Now()}}
	b.mu.Lock()
	b.lives = append(b.lives, l)
	b.mu.Unlock()
	b.notify()
	return l
}

// Recorded adds a recorded cassette to the board, after the live ones.
func (b *Board) Recorded(d *Document) {
	b.mu.Lock()
	b.docs = append(b.docs, d)
	b.mu.Unlock()
	b.notify()
}

func (b *Board) notify() {
	b.mu.Lock()
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// Replaying says that the traffic is a replay of c, whose engine says
// which recorded interactions no client used so far (unused, 1-based;
// nil: the view counts those no request was answered by). The model then
// has a Replay with the misses and the unused requests, and the board
// shows c beside the traffic.
func (l *Live) Replaying(c *cassettes.Cassette, unused func() []int) {
	m := l.m
	m.mu.Lock()
	m.recorded, m.unused = requests(c), unused
	m.name = m.b.doc.Name + " (recorded)"
	m.mu.Unlock()
	m.board.Recorded(Build(m.name, c))
}

// TakesMessages says that the live log should hand Live each message
// whole (livelog.Viewer).
func (l *Live) TakesMessages() bool { return true }

// Enabled is true: Live takes every message, whatever the log shows.
func (l *Live) Enabled(context.Context, slog.Level) bool { return true }

// Handle adds the record's message to the model and passes the record,
// without the message, to the live log's handler.
func (l *Live) Handle(ctx context.Context, r slog.Record) error {
	var from, kind, note, id string
	var raw json.RawMessage
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	hasNote := false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case livelog.MessageKey:
			raw, _ = a.Value.Any().(json.RawMessage)
			return true
		case livelog.NoteKey:
			note, hasNote = a.Value.String(), true
		case "dir":
			from = a.Value.String()
		case "kind":
			kind = a.Value.String()
		case "id":
			id = a.Value.String()
		}
		out.AddAttrs(a)
		return true
	})
	switch {
	case from != "" && (raw != nil || kind == "raw"):
		l.add(from, raw, r.Message, note, r.Time)
	case r.Level >= slog.LevelWarn || hasNote:
		if id == "" && raw != nil {
			// A warning about a message (livelog.Warning: a contract
			// check of the tap) carries the message, not its id.
			if m, err := jsonrpc.Parse(raw); err == nil {
				id = string(m.ID)
			}
		}
		text := r.Message
		if hasNote && note != "" && !strings.Contains(text, note) {
			text += " [" + note + "]"
		}
		l.addNote(text, r.Level.String(), id, r.Time)
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
	ms := m.since(at)
	if raw != nil {
		m.b.messageNoted(from, ms, append(json.RawMessage(nil), raw...), nil, note)
	} else {
		text := line
		m.b.messageNoted(from, ms, nil, &text, note)
	}
	m.mu.Unlock()
	m.board.notify()
}

// addNote puts a note of mcpmock's into the model.
func (l *Live) addNote(text, level, id string, at time.Time) {
	m := l.m
	m.mu.Lock()
	m.b.note(text, level, id, m.since(at))
	m.mu.Unlock()
	m.board.notify()
}

func (m *liveModel) since(at time.Time) cassettes.Millis {
	return cassettes.Millis(float64(at.Sub(m.start)) / float64(time.Millisecond))
}

// Document returns the model so far (a copy).
func (l *Live) Document() *Document {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	d := *m.b.doc
	// Copies that are never nil: the page reads [] where there is none.
	d.Messages = append(make([]Message, 0, len(d.Messages)), d.Messages...)
	for i := range d.Messages {
		if c := d.Messages[i].ListChange; c != nil { // the builder sets After later
			copied := *c
			d.Messages[i].ListChange = &copied
		}
	}
	d.Sessions = append(make([]Session, 0, len(d.Sessions)), d.Sessions...)
	d.Tools = append(make([]ToolList, 0, len(d.Tools)), d.Tools...)
	if m.recorded != nil {
		d.Replay = &Replay{Recorded: m.name, Misses: misses(&d), Unused: m.unusedSoFar()}
	}
	return &d
}

// unusedSoFar are the recorded requests that no client used so far.
func (m *liveModel) unusedSoFar() []Recorded {
	out := []Recorded{}
	var positions []int
	if m.unused != nil {
		positions = m.unused()
	} else {
		for n := range m.recorded {
			if m.b.answered[n] == 0 {
				positions = append(positions, n)
			}
		}
		slices.Sort(positions)
	}
	for _, n := range positions {
		if r, ok := m.recorded[n]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Handler serves the page of the board: the same page and JSON API as
// Handler, the cassettes being the live traffic of each Live (first, with
// "live": true) and then the recorded ones, and
//
//	GET /api/events          an event stream: an event "messages" whose
//	                         data is the count of messages of each
//	                         cassette (a JSON array) whenever messages came
//	                         (at most 4 a second)
//
// which the page follows, fetching again the cassettes that changed.
func (b *Board) Handler() http.Handler {
	return serve(b.cassettes, b.events)
}

// Handler serves the page of the board of l (Board.Handler).
func (l *Live) Handler() http.Handler { return l.m.board.Handler() }

// cassettes are the board's models now: the live ones first.
func (b *Board) cassettes() (Cassettes, int) {
	b.mu.Lock()
	lives, docs := b.lives, b.docs
	b.mu.Unlock()
	out := make(Cassettes, 0, len(lives)+len(docs))
	for _, l := range lives {
		out = append(out, l.Document())
	}
	return append(out, docs...), len(lives)
}

// counts are the message counts of the board's cassettes, and a channel
// closed at the next change.
func (b *Board) counts() ([]int, <-chan struct{}) {
	b.mu.Lock()
	changed := b.changed
	lives, docs := b.lives, b.docs
	b.mu.Unlock()
	out := make([]int, 0, len(lives)+len(docs))
	for _, l := range lives {
		l.m.mu.Lock()
		out = append(out, len(l.m.b.doc.Messages))
		l.m.mu.Unlock()
	}
	for _, d := range docs {
		out = append(out, len(d.Messages))
	}
	return out, changed
}

// events serves GET /api/events.
func (b *Board) events(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	flusher, _ := w.(http.Flusher)
	sent := ""
	for {
		counts, changed := b.counts()
		if data, _ := json.Marshal(counts); string(data) != sent {
			fmt.Fprintf(w, "event: messages\ndata: %s\n\n", data)
			if flusher != nil {
				flusher.Flush()
			}
			sent = string(data)
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
}
