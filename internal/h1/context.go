package h1

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// reqContext is a request's context. It ends when its handler returns,
// when the client goes away (the watch) or when the server closes, as the
// context of http.Server's requests does, and holds the value of
// http.LocalAddrContextKey. It lives in the response, where
// context.WithCancel and its cancel function made two allocations a
// request. A context made from it (context.WithCancel, context.AfterFunc)
// learns of its end through AfterFunc, without a goroutine of its own.
type reqContext struct {
	local net.Addr

	mu    sync.Mutex // guards what follows
	done  chan struct{}
	err   error
	after []*func() // AfterFunc's, run when it ends
	asked bool      // AfterFunc was called
}

// watched reports whether someone asked to learn of the context's end:
// its Done channel, or AfterFunc.
func (c *reqContext) watched() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done != nil || c.asked
}

func (c *reqContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done returns a channel closed when the context ends, made by the first
// call: a request whose handler never asks makes none.
func (c *reqContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *reqContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value holds http.LocalAddrContextKey's value alone. Any other key, the
// context package's own among them, finds nothing: context.Cause then
// reports Err.
func (c *reqContext) Value(key any) any {
	if key == http.LocalAddrContextKey {
		return c.local
	}
	return nil
}

// AfterFunc runs f on a goroutine of its own once the context ends (at
// once if it has), as context.AfterFunc does; stop keeps f from running
// and reports whether it did. The context package calls it for a context
// made from this one.
func (c *reqContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = true
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	p := &f
	c.after = append(c.after, p)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.after, p)
		if i < 0 {
			return false
		}
		c.after = slices.Delete(c.after, i, i+1)
		return true
	}
}

// cancel ends the context, once.
func (c *reqContext) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	for _, f := range c.after {
		go (*f)()
	}
	c.after = nil
}

func (c *reqContext) String() string { return "h1.reqContext" }
