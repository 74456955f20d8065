package replayer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// Resumption of the GET stream (Streamable HTTP, 2025-03-26 to 2025-11-25).
// Each event of a session's GET stream has an id ("get-1", "get-2"...,
// numbered per session) and the session keeps the last events it sent on
// it (at least resendEvents of them). A client that opens the GET stream
// again with Last-Event-ID gets the kept events that came after that one,
// then the stream goes on live. A resuming GET takes over from a stream
// the server still thinks open (the client's old connection may not have
// been noticed as gone yet); a GET without Last-Event-ID while one is open
// is 409 Conflict.

// resendEvents is how many GET stream events a session keeps at least.
const resendEvents = 1000

// streamLog is the state of a session's GET stream; httpSession.mu guards
// it.
type streamLog struct {
	next   uint64   // the number of the next event (from 1)
	first  uint64   // the number of events[0]
	events [][]byte // the kept events, oldest first
	cancel context.CancelFunc
	done   chan struct{} // closed when the open stream has ended
}

const eventIDPrefix = "get-"

// logEvent numbers and keeps a message sent on the GET stream, and returns
// its event id.
func (hs *httpSession) logEvent(msg []byte) string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	l := &hs.stream
	if l.next == 0 {
		l.next = 1
	}
	n := l.next
	l.next++
	if len(l.events) == 0 {
		l.first = n
	}
	l.events = append(l.events, msg)
	if len(l.events) >= 2*resendEvents {
		// Keep the newest resendEvents, in a fresh array (the old one
		// is let go).
		drop := len(l.events) - resendEvents
		l.events = append([][]byte(nil), l.events[drop:]...)
		l.first += uint64(drop)
	}
	return eventIDPrefix + strconv.FormatUint(n, 10)
}

// openStream marks the session's GET stream open and returns its context
// and its done channel (for closeStream). With Last-Event-ID it ends an
// open stream first; without, an open stream is 409 Conflict.
func (hs *httpSession) openStream(w http.ResponseWriter, r *http.Request) (context.Context, chan struct{}, bool) {
	resume := r.Header.Get("Last-Event-ID") != ""
	for {
		hs.mu.Lock()
		if !hs.streamed {
			hs.streamed = true
			ctx, cancel := context.WithCancel(r.Context())
			done := make(chan struct{})
			hs.stream.cancel, hs.stream.done = cancel, done
			hs.mu.Unlock()
			return ctx, done, true
		}
		cancel, done := hs.stream.cancel, hs.stream.done
		hs.mu.Unlock()
		if !resume {
			http.Error(w, "Conflict: only one GET stream is allowed per session", http.StatusConflict)
			return nil, nil, false
		}
		cancel()
		select {
		case <-done:
		case <-r.Context().Done():
			return nil, nil, false
		}
	}
}

// closeStream marks the stream of done ended.
func (hs *httpSession) closeStream(done chan struct{}) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.stream.done == done {
		hs.streamed = false
		hs.stream.cancel()
	}
	close(done)
}

// resend writes the kept events after the one lastID names.
func (hs *httpSession) resend(lastID string, sw *sseWriter, log *slog.Logger) error {
	if lastID == "" {
		return nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(lastID, eventIDPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(lastID, eventIDPrefix) {
		log.Info(fmt.Sprintf("mcpmock: Last-Event-ID %q names no event of this session's GET stream: nothing to resend", lastID))
		return nil
	}
	hs.mu.Lock()
	l := &hs.stream
	var missed [][]byte
	from := n + 1
	if from < l.first {
		if len(l.events) > 0 {
			log.Warn(fmt.Sprintf("mcpmock: resuming after %s: events %s%d to %s%d are no longer kept (the last %d are)", lastID, eventIDPrefix, from, eventIDPrefix, l.first-1, resendEvents))
		}
		from = l.first
	}
	if from >= l.first && from-l.first < uint64(len(l.events)) {
		missed = append(missed, l.events[from-l.first:]...)
	}
	hs.mu.Unlock()
	for i, msg := range missed {
		if err := sw.eventID(eventIDPrefix+strconv.FormatUint(from+uint64(i), 10), "message", msg); err != nil {
			return err
		}
	}
	return nil
}
