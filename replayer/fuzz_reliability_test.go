package replayer

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

func fuzzEngine(f *testing.F) *Engine {
	f.Helper()
	c, err := cassettes.Parse("fuzz.json", []byte(catalogueCassette))
	if err != nil {
		f.Fatal(err)
	}
	e, err := New(c, &Options{ReplyTimeout: 50 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	return e
}

var fuzzSeeds = []string{
	goodCall,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
	`{"jsonrpc":"2.0","id":77,"result":{}}`,
	"\x00\xff{\n[]\n{\"jsonrpc\":\"1.0\"}",
}

// FuzzServe feeds random input to the stdio replay front end: it never
// panics, and it returns once the input ends.
func FuzzServe(f *testing.F) {
	e := fuzzEngine(f)
	for _, s := range fuzzSeeds {
		f.Add([]byte(s + "\n" + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- e.Serve(ctx, bytes.NewReader(data), io.Discard) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("Serve did not return within 10s of the end of its input %q", data)
		}
	})
}

// FuzzHTTPHandler posts random bodies to the HTTP replay front end, in a
// session and stateless: it never panics, always answers, and never
// answers 5xx.
func FuzzHTTPHandler(f *testing.F) {
	e := fuzzEngine(f)
	h := e.Handler(&HTTPOptions{KeepAlive: -1})
	f.Cleanup(h.Close)
	init := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.ServeHTTP(init, req)
	sid := init.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		switch mode % 3 {
		case 0:
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		case 1:
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, req.WithContext(ctx))
		}()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("no answer within 10s to %q", body)
		}
		if w.Code >= 500 {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
	})
}
