package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/mcp"
)

// ErrNoStream is a server that offers no stream for its own messages: a
// GET answered with something other than an event stream (405, say).
var ErrNoStream = errors.New("the server offers no GET stream")

// Listen opens the stream on which the server sends messages of its own
// (the GET stream of Streamable HTTP; for HTTP+SSE, the event stream's
// messages that answer no pending Do) and hands them to h until ctx ends,
// the Client is closed, or the stream ends and cannot be resumed. A GET
// stream cut after an event id is resumed with Last-Event-ID. It returns
// nil at ctx's end or Close, an *Error wrapping ErrNoStream when the
// server has no such stream.
func (c *Client) Listen(ctx context.Context, h *Handler) error {
	c.mu.Lock()
	transport, closed := c.transport, c.closed
	c.mu.Unlock()
	if closed {
		return &Error{Method: http.MethodGet, URL: c.URL(), Err: ErrClosed}
	}
	if transport == SSE {
		return c.listenLegacy(ctx, h)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url.String(), nil)
	if err != nil {
		return fmt.Errorf("mcpclient: %w", err)
	}
	c.setHeaders(req.Header, nil, false)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.fail(req, 0, err)
	}
	defer resp.Body.Close()
	if formOf(resp) != FormSSE {
		h.answer(&Answer{Status: resp.StatusCode, Header: resp.Header, Form: formOf(resp), ContentLength: resp.ContentLength})
		return c.fail(req, resp.StatusCode, ErrNoStream)
	}
	x := &exchange{c: c, r: &Request{HTTP: req, ctx: ctx}, h: h, listen: true}
	if err := x.read(resp, StreamGet, false); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// Close ends the session: for Streamable HTTP it sends DELETE with the
// session id (waiting at most 2 seconds for the answer), for HTTP+SSE it
// closes the event stream. Calls in flight end with their contexts; Listen
// returns. Close is idempotent and safe from several goroutines; it
// returns the error of the DELETE, if any (405 is no error: the server
// keeps sessions to itself).
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	session, legacy := c.session, c.legacy
	c.mu.Unlock()
	var err error
	if legacy != nil {
		legacy.close()
	} else if session != "" {
		err = c.delete(session)
	}
	if c.own {
		c.http.CloseIdleConnections()
	}
	return err
}

// deleteTimeout bounds the DELETE that ends a session.
const deleteTimeout = 2 * time.Second

func (c *Client) delete(session string) error {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url.String(), nil)
	if err != nil {
		return fmt.Errorf("mcpclient: %w", err)
	}
	c.setHeaders(req.Header, nil, false)
	req.Header.Set(mcp.HeaderSessionID, session)
	resp, err := c.http.Do(req)
	err = cassettes.RedactURLError(err) // it names the server's URL
	if err != nil {
		return c.fail(req, 0, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		return c.fail(req, resp.StatusCode, nil)
	}
	return nil
}
