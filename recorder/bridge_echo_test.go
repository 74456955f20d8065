package recorder

import (
	"bufio"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBridgeDeliversEchoesOnce: the stdio-to-HTTP bridge resumes a stream
// that ended before its answer, and the upstream sends every event it sent
// before again, {} and empty priming data included. The stdio client gets
// each message once, and nothing that is not one.
func TestBridgeDeliversEchoesOnce(t *testing.T) {
	up := &echoUpstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	clientR, bridgeW := io.Pipe()
	bridgeR, clientW := io.Pipe()
	bridged := make(chan error, 1)
	go func() {
		bridged <- StdioToHTTP(testCtx(t), srv.URL+"/mcp", bridgeR, bridgeW, rec, nil)
		bridgeW.Close()
	}()
	got := make(chan string, 16)
	go func() {
		defer close(got)
		lines := bufio.NewScanner(clientR)
		for lines.Scan() {
			got <- lines.Text()
		}
	}()
	io.WriteString(clientW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
	first := <-got
	io.WriteString(clientW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(clientW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work"}}`+"\n")
	lines := []string{first, <-got, <-got}
	clientW.Close()
	if err := <-bridged; err != nil {
		t.Errorf("StdioToHTTP: %v", err)
	}
	for line := range got {
		lines = append(lines, line)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("the stdio client got (-want +got):\n%s", diff)
	}
}
