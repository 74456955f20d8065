package replayer

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoCassette was recorded by a tap that took the {} data of SSE priming
// events for raw lines: one in initialize's exchange, one on its own after
// it, one in a call's exchange before its progress.
var echoCassette = cassette(
	`{"from":"client","atMs":0,"request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}},`+
		`"exchange":[{"from":"server","atMs":0.5,"raw":"{}"}],`+
		`"response":{"from":"server","atMs":1,"message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}}`,
	`{"from":"server","atMs":2,"raw":"{}","http":{"form":"sse","stream":"get","eventIds":["6"]}}`,
	`{"from":"client","atMs":3,"request":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{}}},`+
		`"exchange":[{"from":"server","atMs":3.5,"raw":" { } "},{"from":"server","atMs":4,"message":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}}],`+
		`"response":{"from":"server","atMs":5,"message":{"jsonrpc":"2.0","id":1,"result":`+text("done")+`}}}`,
)

// TestReplaySendsNoPrimingData: a go-sdk client, which ends its session on
// a line that is no JSON-RPC message ("invalid message version tag"),
// replays the cassette over stdio and HTTP; the replay sends none of the {}
// lines and logs once why.
func TestReplaySendsNoPrimingData(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			c, err := cassettes.Parse("echo.json", []byte(echoCassette))
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			e, err := New(c, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			var tr mcp.Transport
			if transport == "stdio" {
				serverR, clientW := io.Pipe()
				clientR, serverW := io.Pipe()
				done := make(chan error, 1)
				go func() {
					done <- e.Serve(ctx, serverR, serverW)
					serverW.Close()
				}()
				t.Cleanup(func() {
					clientW.Close()
					<-done
				})
				tr = &mcp.IOTransport{Reader: clientR, Writer: clientW}
			} else {
				h := e.Handler(nil)
				srv := httptest.NewServer(h)
				t.Cleanup(func() {
					h.Close()
					srv.Close()
				})
				tr = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}
			}
			got := make(chan string, 10)
			cl := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { got <- req.Params.Data.(string) },
			})
			cs, err := cl.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("tools/call work: %v", err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != "done" {
				t.Errorf("tools/call work answered %q, want done", text)
			}
			if m := <-got; m != "working" {
				t.Errorf("log message %q, want working", m)
			}
			if n := strings.Count(logs.String(), "no JSON-RPC message"); n != 1 {
				t.Errorf("the replay logged %d times about lines that are no message, want once:\n%s", n, logs.String())
			}
			if !strings.Contains(logs.String(), "holds 3 server lines") {
				t.Errorf("the log does not count the 3 lines:\n%s", logs.String())
			}
		})
	}
}

// TestReplayLogsDroppedEchoes: what Load dropped from an old cassette is
// in the replay's log.
func TestReplayLogsDroppedEchoes(t *testing.T) {
	c, err := cassettes.Parse("old.json", []byte(cassette(
		initialize,
		`{"from":"server","atMs":2,"notification":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},"http":{"form":"sse","stream":"get","eventIds":["e1"]}}`,
		`{"from":"server","atMs":3,"notification":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},"http":{"form":"sse","stream":"get","eventIds":["e1"]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 2 {
		t.Fatalf("%d interactions after Parse, want the repeat dropped", len(c.Interactions))
	}
	var logs syncBuffer
	if _, err := New(c, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "dropped 1 server message recorded again") {
		t.Errorf("the log does not say what Load dropped:\n%s", logs.String())
	}
}

// TestReplaySendsScriptedNoMessage: an overlay that scripts a {} line gets
// it sent: only recorded echoes are left out.
func TestReplaySendsScriptedNoMessage(t *testing.T) {
	o := overlay(t, `{"version": 1, "interactions": [
	  {"request": {"method": "tools/call", "params": {"name": "work"}}, "when": {"nth": 1},
	   "exchange": [{"from": "server", "atMs": 0, "raw": "{}"}],
	   "response": {"message": {"result": {"content": []}}}}]}`)
	w, _ := serveCassette(t, echoCassette, &Options{Overlays: []*cassettes.Cassette{o}})
	w.send(callLine(7, "work", `{}`))
	if m := w.recv(); len(m) != 0 {
		t.Errorf("first line %v, want the scripted {}", m)
	}
	if m := w.recv(); m["id"] != float64(7) {
		t.Errorf("second line %v, want the answer", m)
	}
}

// syncBuffer is a bytes.Buffer that a logger and the test share.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
