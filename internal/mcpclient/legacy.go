package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// ErrNoEndpoint is an HTTP+SSE stream that did not begin with an endpoint
// event naming a URL of the server's own origin.
var ErrNoEndpoint = errors.New("no endpoint event")

// endpointTimeout bounds the wait for the endpoint event, which a server
// sends as the stream opens: a Streamable HTTP server that answers the
// fallback's GET with a stream of its own would never send one.
const endpointTimeout = 5 * time.Second

// legacyStream is the event stream of the HTTP+SSE transport: it carries
// the answers to what is posted to its endpoint. Its reader goroutine
// routes each message to the Do waiting for it, and is owned by the
// Client: Close waits for it.
type legacyStream struct {
	endpoint *url.URL
	cancel   context.CancelFunc
	done     chan struct{} // closed when the reader has returned

	mu       sync.Mutex // guards the fields below
	waiters  []*waiter  // the Do calls waiting, oldest first
	listener *waiter    // Listen's, if it runs
	err      error      // why the stream ended, once it did
}

// waiter is a call that takes messages from the stream.
type waiter struct {
	ids   map[jsonrpc.ID]bool // the responses routed to it
	queue []Message           // guarded by legacyStream.mu
	wake  chan struct{}       // signalled when queue grows or the stream ends
}

func newWaiter(ids []jsonrpc.ID) *waiter {
	return &waiter{ids: pendingOf(ids), wake: make(chan struct{}, 1)}
}

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// openLegacy opens the HTTP+SSE stream once: a GET of the URL, whose first
// event must be the endpoint to post to.
func (c *Client) openLegacy(ctx context.Context) (*legacyStream, error) {
	c.openMu.Lock()
	defer c.openMu.Unlock()
	c.mu.Lock()
	ls, closed := c.legacy, c.closed
	c.mu.Unlock()
	if ls != nil {
		return ls, nil
	}
	if closed {
		return nil, &Error{Method: http.MethodGet, URL: c.URL(), Err: ErrClosed}
	}
	streamCtx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel) // the handshake is bounded by ctx
	var late atomic.Bool
	timer := time.AfterFunc(endpointTimeout, func() { late.Store(true); cancel() })
	defer timer.Stop()
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, c.url.String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	for k, v := range c.header {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &Error{Method: http.MethodGet, URL: c.URL(), Err: err}
	}
	if formOf(resp) != FormSSE {
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		cancel()
		return nil, &Error{Method: http.MethodGet, URL: c.URL(), Status: resp.StatusCode, Excerpt: excerpt(body[:n]),
			Err: fmt.Errorf("%w: the answer is not an event stream (%s)", ErrNoEndpoint, resp.Header.Get("Content-Type"))}
	}
	sr := jsonrpc.NewSSEReader(resp.Body, c.max)
	var endpoint *url.URL
	for endpoint == nil {
		ev, err := sr.Next()
		if err != nil || ev.TooLong {
			resp.Body.Close()
			cancel()
			switch {
			case ctx.Err() != nil:
				err = ctx.Err()
			case late.Load():
				err = fmt.Errorf("none within %v", endpointTimeout)
			case err == nil:
				err = ErrTooLong
			}
			return nil, &Error{Method: http.MethodGet, URL: c.URL(), Status: resp.StatusCode, Err: fmt.Errorf("%w: the stream ended first: %w", ErrNoEndpoint, err), Limit: c.max, Size: int64(ev.Size)}
		}
		if ev.Type != "endpoint" && !ev.HasData() {
			continue // a keep-alive
		}
		if ev.Type != "endpoint" {
			resp.Body.Close()
			cancel()
			return nil, &Error{Method: http.MethodGet, URL: c.URL(), Status: resp.StatusCode,
				Err: fmt.Errorf("%w: the stream began with an event of type %q; is it an HTTP+SSE endpoint?", ErrNoEndpoint, ev.Type)}
		}
		endpoint, err = c.url.Parse(strings.TrimSpace(string(ev.Data)))
		if err == nil && (endpoint.Scheme != c.url.Scheme || endpoint.Host != c.url.Host) {
			err = fmt.Errorf("it names %s, of another origin", endpoint.Redacted())
		}
		if err != nil {
			resp.Body.Close()
			cancel()
			return nil, &Error{Method: http.MethodGet, URL: c.URL(), Status: resp.StatusCode, Err: fmt.Errorf("%w: the endpoint event %.80q is refused: %w", ErrNoEndpoint, ev.Data, err)}
		}
	}
	stop()
	if !timer.Stop() {
		resp.Body.Close()
		return nil, &Error{Method: http.MethodGet, URL: c.URL(), Status: resp.StatusCode, Err: fmt.Errorf("%w: none within %v", ErrNoEndpoint, endpointTimeout)}
	}
	ls = &legacyStream{endpoint: endpoint, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ls.done)
		defer resp.Body.Close()
		ls.read(sr)
	}()
	c.mu.Lock()
	closed = c.closed
	c.legacy = ls
	c.mu.Unlock()
	if closed { // Close ran during the handshake
		ls.close()
		return nil, &Error{Method: http.MethodGet, URL: c.URL(), Err: ErrClosed}
	}
	return ls, nil
}

// read routes the stream's messages until it ends.
func (ls *legacyStream) read(sr *jsonrpc.SSEReader) {
	for {
		ev, err := sr.Next()
		if err == nil && ev.TooLong {
			err = fmt.Errorf("an SSE event of %d bytes: %w", ev.Size, ErrTooLong)
		}
		if err != nil {
			ls.mu.Lock()
			ls.err = fmt.Errorf("the event stream ended: %w", err)
			for _, w := range ls.waiters {
				w.signal()
			}
			if ls.listener != nil {
				ls.listener.signal()
			}
			ls.mu.Unlock()
			return
		}
		if ev.Data == nil || (ev.Type != "" && ev.Type != "message") || jsonrpc.NoMessage(ev.Data) {
			continue
		}
		for _, m := range split(ev.Data, Message{Stream: StreamSSE, EventID: ev.ID, HasEventID: ev.HasID}) {
			ls.route(m)
		}
	}
}

// route gives m to the call that waits for it: the Do whose request it
// answers, else the oldest Do, else Listen; with none, it is dropped.
func (ls *legacyStream) route(m Message) {
	var id jsonrpc.ID
	if msg, err := jsonrpc.Parse(m.Data); err == nil && msg.Kind() == jsonrpc.KindResponse {
		id = msg.ID
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	to := ls.listener
	if len(ls.waiters) > 0 {
		to = ls.waiters[0]
	}
	for _, w := range ls.waiters {
		if !id.IsZero() && w.ids[id] {
			to = w
			break
		}
	}
	if to != nil {
		to.queue = append(to.queue, m)
		to.signal()
	}
}

func (ls *legacyStream) add(w *waiter) {
	ls.mu.Lock()
	ls.waiters = append(ls.waiters, w)
	ls.mu.Unlock()
}

func (ls *legacyStream) remove(w *waiter) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for i, x := range ls.waiters {
		if x == w {
			ls.waiters = append(ls.waiters[:i], ls.waiters[i+1:]...)
			return
		}
	}
}

// take returns the messages queued for w, and why the stream ended if it
// did.
func (ls *legacyStream) take(w *waiter) ([]Message, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q, ls.err
}

func (ls *legacyStream) close() {
	ls.cancel()
	<-ls.done
}

// fallBack tries HTTP+SSE after a Streamable POST of initialize was
// refused, and readies r for it.
func (c *Client) fallBack(r *Request) error {
	ls, err := c.openLegacy(r.ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.transport = SSE
	c.mu.Unlock()
	return c.retarget(r, ls)
}

// retarget readies r, made for Streamable HTTP, for the endpoint of ls.
func (c *Client) retarget(r *Request, ls *legacyStream) error {
	req, err := http.NewRequestWithContext(r.ctx, http.MethodPost, ls.endpoint.String(), bytes.NewReader(r.body))
	if err != nil {
		return fmt.Errorf("mcpclient: %w", err)
	}
	c.setHeaders(req.Header, r.msg, true)
	req.Header.Set("Content-Type", "application/json")
	r.HTTP = req
	return nil
}

// doLegacy posts r to the endpoint and waits on the stream for the
// responses to its requests.
func (c *Client) doLegacy(r *Request, h *Handler) error {
	c.mu.Lock()
	ls := c.legacy
	c.mu.Unlock()
	if r.HTTP.URL.String() != ls.endpoint.String() {
		// Made while Auto had not found HTTP+SSE yet.
		if err := c.retarget(r, ls); err != nil {
			return err
		}
	}
	w := newWaiter(r.ids)
	if len(r.ids) > 0 {
		ls.add(w)
		defer ls.remove(w)
	}
	resp, err := c.http.Do(r.HTTP)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		return c.fail(r.HTTP, 0, err)
	}
	x := &exchange{c: c, r: r, h: h, pending: pendingOf(r.ids)}
	err = x.read(resp, StreamPost, false)
	resp.Body.Close()
	if err != nil || x.stopped {
		return err
	}
	if resp.StatusCode >= 400 {
		return x.result(resp, r.HTTP)
	}
	for len(x.pending) > 0 {
		msgs, ended := ls.take(w)
		for _, m := range msgs {
			if x.one(m) {
				return nil
			}
		}
		if len(x.pending) == 0 {
			break
		}
		if len(msgs) == 0 && ended != nil {
			return c.fail(r.HTTP, resp.StatusCode, fmt.Errorf("%w: %w", ErrNoAnswer, ended))
		}
		select {
		case <-w.wake:
		case <-r.ctx.Done():
			return c.fail(r.HTTP, resp.StatusCode, r.ctx.Err())
		}
	}
	return nil
}

// listenLegacy hands over the stream's messages that no Do waits for.
func (c *Client) listenLegacy(ctx context.Context, h *Handler) error {
	ls, err := c.openLegacy(ctx)
	if err != nil {
		return err
	}
	w := newWaiter(nil)
	ls.mu.Lock()
	if ls.listener != nil {
		ls.mu.Unlock()
		return fmt.Errorf("mcpclient: %s: Listen is already running", c.URL())
	}
	ls.listener = w
	ls.mu.Unlock()
	defer func() {
		ls.mu.Lock()
		ls.listener = nil
		ls.mu.Unlock()
	}()
	for {
		msgs, ended := ls.take(w)
		for _, m := range msgs {
			if h.message(m) {
				return nil
			}
		}
		if len(msgs) == 0 && ended != nil {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed || ctx.Err() != nil {
				return nil
			}
			return &Error{Method: http.MethodGet, URL: c.URL(), Err: ended}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return nil
		}
	}
}
