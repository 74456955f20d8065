package replayer_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/replayer"
)

// TestUpstreamAnswerOverTheLimit: in new-episodes mode the live server's
// JSON answer is read up to the message limit, not whole: a server that
// answers more is an upstream error naming the limit.
func TestUpstreamAnswerOverTheLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range jsonrpc.DefaultMaxLine>>20 + 2 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return // the client stopped reading
			}
		}
		io.WriteString(w, `"}]}}`)
	}))
	defer srv.Close()
	u, err := replayer.DialUpstream(replayer.UpstreamOptions{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	_, err = u.Call(t.Context(), []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"big","arguments":{}}}`))
	if !errors.Is(err, replayer.ErrUpstream) || !strings.Contains(err.Error(), "message limit") {
		t.Fatalf("Call = %v, want an upstream error naming the message limit", err)
	}
}
