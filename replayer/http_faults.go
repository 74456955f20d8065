package replayer

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// This file carries out the scripted faults that only HTTP has: a status
// instead of the answer, a connection closed or an event stream cut, an
// answer trickled.

// httpFault returns the plan's scripted HTTP status step, if any.
func (p *answerPlan) httpFault() *step {
	for i := range p.Steps {
		if p.Steps[i].Kind == stepHTTPStatus {
			return &p.Steps[i]
		}
	}
	return nil
}

// writeStatus answers with the scripted HTTP status of st, its headers
// and its body.
func writeStatus(w http.ResponseWriter, st *step) {
	for k, v := range st.Headers {
		w.Header().Set(k, v)
	}
	body := st.Body
	if body == "" {
		body = fmt.Sprintf("%d %s (scripted by mcpmock)\n", st.Status, http.StatusText(st.Status))
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(st.Status)
	w.Write([]byte(body))
}

// abortHTTP drops the client's connection without a proper end.
func abortHTTP(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

// trickleWrite writes body at rate bytes a second, flushing each piece.
func trickleWrite(ctx context.Context, w http.ResponseWriter, body []byte, rate int) {
	rc := http.NewResponseController(w)
	const tick = 50 * time.Millisecond
	chunk := max(1, rate*int(tick)/int(time.Second))
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		rc.Flush()
		body = body[n:]
		if len(body) > 0 {
			select {
			case <-time.After(tick):
			case <-ctx.Done():
				return
			}
		}
	}
}
