package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestRequestContext: a request's context (reqContext) ends as
// http.Server's does: when the handler returns, for what the handler left
// holding it; when the server closes, for a context made from it too. It
// reports context.Canceled as its cause; a context made from it learns of
// its end without a goroutine of its own; AfterFunc's stop keeps its
// function from running.
func TestRequestContext(t *testing.T) {
	kept := make(chan context.Context, 1)
	derived := make(chan context.Context, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		switch r.URL.Path {
		case "/return":
			kept <- ctx
		case "/close":
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			derived <- child
			<-child.Done()
		case "/derive":
			// Many contexts made from the request's: no goroutine each.
			// (Other goroutines may start or end meanwhile: the bound is
			// half of one each.)
			before := runtime.NumGoroutine()
			var cancels []context.CancelFunc
			for range 100 {
				_, cancel := context.WithCancel(ctx)
				cancels = append(cancels, cancel)
			}
			after := runtime.NumGoroutine()
			ran := make(chan struct{}, 1)
			stop := context.AfterFunc(ctx, func() { ran <- struct{}{} })
			stopped := stop()
			for _, cancel := range cancels {
				cancel()
			}
			if grew := after - before; grew >= 50 {
				fmt.Fprintf(w, "%d goroutines for 100 contexts", grew)
			} else {
				io.WriteString(w, "no goroutine each")
			}
			if !stopped {
				io.WriteString(w, " stop failed")
			}
		}
	})}
	addr := serve(t, s)
	get := func(path string) string {
		t.Helper()
		c := dial(t, addr)
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	get("/return")
	ctx := <-kept
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context a handler kept did not end when it returned")
	}
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("the ended context's error %v, cause %v; want context.Canceled", ctx.Err(), context.Cause(ctx))
	}
	if _, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); !ok {
		t.Error("the context holds no http.LocalAddrContextKey")
	}

	if got := get("/derive"); got != "no goroutine each" {
		t.Errorf("deriving 100 contexts from a request's: %q, want %q", got, "no goroutine each")
	}

	c := dial(t, addr)
	io.WriteString(c, "GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
	child := <-derived
	s.Close()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context made from a request's did not end when the server closed")
	}
}
