package testpeer

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
)

// wireWatch counts the messages of each method that a server has written
// to its clients, so that a handler can wait until the one it sent is
// written: mcp-go writes notifications from a goroutine of its own (on
// stdio and on the standalone GET stream), so one sent during a call could
// otherwise follow the call's answer, and two sent in turn could swap with
// a request sent between them. The zero value counts nothing yet.
type wireWatch struct {
	mu      sync.Mutex // guards written and changed
	written map[string]int
	changed changed
}

// changed is a channel closed by the next change of what a mutex guards,
// made when someone waits; the zero value has nobody waiting. The mutex
// guards it too.
type changed struct{ ch chan struct{} }

// fire tells the waiters that something changed.
func (c *changed) fire() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// until waits until done, called with mu held, is true, or ctx ends.
func (c *changed) until(ctx context.Context, mu *sync.Mutex, done func() bool) error {
	for {
		mu.Lock()
		if done() {
			mu.Unlock()
			return nil
		}
		if c.ch == nil {
			c.ch = make(chan struct{})
		}
		ch := c.ch
		mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// methodKey precedes the method of a JSON-RPC message as encoding/json
// writes it.
var methodKey = []byte(`"method":"`)

// saw counts the methods of the messages in p, written whole by one Write
// (a line on stdio, an SSE event over HTTP).
func (w *wireWatch) saw(p []byte) {
	var methods []string
	for {
		i := bytes.Index(p, methodKey)
		if i < 0 {
			break
		}
		p = p[i+len(methodKey):]
		j := bytes.IndexByte(p, '"')
		if j < 0 {
			break
		}
		methods = append(methods, string(p[:j]))
		p = p[j:]
	}
	if len(methods) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[string]int{}
	}
	for _, m := range methods {
		w.written[m]++
	}
	w.changed.fire()
}

// count is how many messages of method were written so far.
func (w *wireWatch) count(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[method]
}

// wait waits until n messages of method were written, or ctx ends.
func (w *wireWatch) wait(ctx context.Context, method string, n int) error {
	return w.changed.until(ctx, &w.mu, func() bool { return w.written[method] >= n })
}

// watchedWriter tells a wireWatch what goes through it.
type watchedWriter struct {
	io.WriteCloser
	wire *wireWatch
}

func (w watchedWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.wire.saw(p[:n])
	return n, err
}

// watchedResponse is an http.ResponseWriter that tells a wireWatch what
// goes through it.
type watchedResponse struct {
	http.ResponseWriter
	wire *wireWatch
}

func (w *watchedResponse) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.wire.saw(p[:n])
	return n, err
}

func (w *watchedResponse) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *watchedResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// openStreams tells which sessions have their standalone GET stream open,
// by session id: the go-sdk server writes an SSE comment on the stream as
// soon as it is ready for messages. The zero value knows of none.
type openStreams struct {
	mu   sync.Mutex // guards open
	open map[string]chan struct{}
}

func (s *openStreams) ch(sid string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[string]chan struct{}{}
	}
	c, ok := s.open[sid]
	if !ok {
		c = make(chan struct{})
		s.open[sid] = c
	}
	return c
}

// opened records that session sid's GET stream is open; a second call
// (a reconnection) changes nothing.
func (s *openStreams) opened(sid string) {
	c := s.ch(sid)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// wait waits until session sid's GET stream is open, or ctx ends.
func (s *openStreams) wait(ctx context.Context, sid string) error {
	select {
	case <-s.ch(sid):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstWrite is an http.ResponseWriter that calls f once, after the first
// write of the body or the first flush (a stream's headers sent).
type firstWrite struct {
	http.ResponseWriter
	f    func()
	once sync.Once
}

func (w *firstWrite) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.once.Do(w.f)
	return n, err
}

func (w *firstWrite) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	w.once.Do(w.f) // the stream's headers went out: it is open
}

func (w *firstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }
