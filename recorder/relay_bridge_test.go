package recorder

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/guard"
)

// TestBridgeGuardTimeoutOneAnswer: through the bridge from a stdio client
// to an HTTP server, a call that the server does not answer within
// --call-timeout gets the guard's timeout error, once: when the server
// then ends the call's event stream without an answer (it was cancelled),
// the bridge's own error for a stream without its answer passes through
// the guard, which drops it, so the client's next line answers its next
// request.
func TestBridgeGuardTimeoutOneAnswer(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg := string(body)
		switch {
		case strings.Contains(msg, `"notifications/cancelled"`):
			close(cancelled)
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(msg, `"tools/call"`):
			// An event stream that ends, unanswered, once the call is
			// cancelled.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-cancelled:
			case <-r.Context().Done():
			}
		case strings.Contains(msg, `"id"`):
			w.Header().Set("Content-Type", "application/json")
			id := strings.Split(strings.Split(msg, `"id":`)[1], ",")[0]
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(up.Close)
	g, err := guard.New(&guard.Options{CallTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	clientR, bridgeW := io.Pipe()
	bridgeR, clientW := io.Pipe()
	bridged := make(chan error, 1)
	go func() {
		err := StdioToHTTP(testCtx(t), up.URL+"/mcp", bridgeR, bridgeW, rec, &BridgeOptions{Guard: g})
		bridgeW.Close()
		bridged <- err
	}()
	out := bufio.NewReader(clientR)
	exchange := func(send, want string) {
		t.Helper()
		if _, err := io.WriteString(clientW, send+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("after %s came %q, %v; want a line with %s", send, line, err, want)
		}
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, `"id":1`)
	exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, `did not answer within 50ms`)
	<-cancelled
	exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, `"id":3`)
	clientW.Close()
	if err := <-bridged; err != nil {
		t.Fatal(err)
	}
}
