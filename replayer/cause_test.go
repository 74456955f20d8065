package replayer_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// testdata/cause.json is what a server that behaves as server-everything
// does left in a cassette: after the client's notifications/initialized it
// announces a tool list change and logs; after the client's
// notifications/roots/list_changed it asks for the roots and logs how many
// it got.

// wireLog notes, in order, the notifications a go-sdk client sends
// (before sending them), the server-initiated messages it handles, and its
// replies (before sending them).
type wireLog struct {
	mu     sync.Mutex
	events []string
}

func (w *wireLog) note(s string) {
	w.mu.Lock()
	w.events = append(w.events, s)
	w.mu.Unlock()
}

func (w *wireLog) Events() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.events...)
}

func (w *wireLog) attach(c *mcp.Client) {
	c.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				w.note("> " + method)
			}
			return next(ctx, method, req)
		}
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			w.note("< " + method)
			res, err := next(ctx, method, req)
			if !strings.HasPrefix(method, "notifications/") {
				b, _ := json.Marshal(res)
				w.note("> reply " + string(b))
			}
			return res, err
		}
	})
}

// TestServerMessagesFollowTheirCause replays causeCassette to a real go-sdk
// client over stdio, Streamable HTTP (the GET stream) and HTTP+SSE: what
// the server sent because of a client notification comes after the client
// sent it, the roots/list comes after the client's roots changed, and its
// reply (the new roots) is awaited before the log that counts them.
func TestServerMessagesFollowTheirCause(t *testing.T) {
	want := []string{
		"> notifications/initialized",
		"< notifications/tools/list_changed",
		"< notifications/message",
		"> notifications/roots/list_changed",
		"< roots/list",
		`> reply {"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}`,
		"< notifications/message",
	}
	for _, tr := range []string{"stdio", "streamable-http", "sse"} {
		t.Run(tr, func(t *testing.T) {
			c, err := cassettes.Load("testdata/cause.json")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var mismatches []string
			e, err := replayer.New(c, &replayer.Options{ReplyTimeout: 10 * time.Second, OnReplyMismatch: func(m replayer.ReplyMismatch) {
				mu.Lock()
				mismatches = append(mismatches, m.String())
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			wl := &wireLog{}

			logs := make(chan string, 4)
			tools := make(chan struct{}, 4)
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
				LoggingMessageHandler:  func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params.Data.(string) },
			})
			wl.attach(client)
			client.AddRoots(&mcp.Root{URI: "file:///a"})
			cs, err := client.Connect(ctx, causeTransport(t, ctx, e, tr), &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			wait := func(ch <-chan struct{}) {
				t.Helper()
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatalf("timed out; the client saw %q", wl.Events())
				}
			}
			waitLog := func(text string) {
				t.Helper()
				select {
				case got := <-logs:
					if got != text {
						t.Fatalf("log %q, want %q; the client saw %q", got, text, wl.Events())
					}
				case <-ctx.Done():
					t.Fatalf("timed out waiting for log %q; the client saw %q", text, wl.Events())
				}
			}
			wait(tools)
			waitLog("ready")
			client.AddRoots(&mcp.Root{URI: "file:///b"})
			waitLog("Roots updated: 2 root(s)")
			if diff := cmp.Diff(want, wl.Events()); diff != "" {
				t.Errorf("what the client saw, in order (-live +replay):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(mismatches) > 0 {
				t.Errorf("reply mismatches: %q", mismatches)
			}
		})
	}
}

// causeTransport serves e to one go-sdk client over tr.
func causeTransport(t *testing.T, ctx context.Context, e *replayer.Engine, tr string) mcp.Transport {
	t.Helper()
	switch tr {
	case "stdio":
		clientR, serverW := io.Pipe()
		serverR, clientW := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.Serve(ctx, serverR, serverW)
			serverW.Close()
		}()
		t.Cleanup(func() {
			clientW.Close()
			<-done
		})
		return &mcp.IOTransport{Reader: clientR, Writer: clientW}
	}
	h := e.Handler(nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	if tr == "sse" {
		return &mcp.SSEClientTransport{Endpoint: srv.URL + "/sse"}
	}
	return &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
}
