package recorder

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestBridgeBatchAnswer: a batch answered with a JSON batch reaches the
// stdio client as that one line, and its responses count: no error is
// made up for requests that were answered.
func TestBridgeBatchAnswer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if body[0] == '[' {
			io.WriteString(w, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":3,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	clientR, bridgeW := io.Pipe()
	bridgeR, clientW := io.Pipe()
	bridged := make(chan error, 1)
	go func() {
		bridged <- StdioToHTTP(testCtx(t), up.URL+"/mcp", bridgeR, bridgeW, rec, nil)
		bridgeW.Close()
	}()
	lines := jsonrpc.NewLineReader(clientR, 1<<20)
	io.WriteString(clientW, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`+"\n")
	io.WriteString(clientW, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	clientW.Close()
	var got []string
	for {
		line, err := lines.ReadLine()
		if err != nil {
			break
		}
		got = append(got, string(line))
	}
	if err := <-bridged; err != nil {
		t.Errorf("StdioToHTTP: %v", err)
	}
	slices.Sort(got)
	want := []string{
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the client got (-want +got)\n%s", diff)
	}
}
