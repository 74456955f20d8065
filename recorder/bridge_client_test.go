package recorder

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/mcp"
	"github.com/mcpmock/mcpmock/internal/testpeer"
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

// TestBridgeStdioClientToHTTPSSEServer: a stdio client reaches a server of
// the HTTP+SSE transport (2024-11-05) through StdioToHTTP, given its SSE
// URL, and sees what it sees of the same server over Streamable HTTP; the
// recording holds every message.
func TestBridgeStdioClientToHTTPSSEServer(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		client   stdioClient
		protocol string
	}{
		{"gosdk/gosdk-client", testpeer.GoSDK, testpeer.RunGoSDK, ""},
		{"gosdk/mcpgo-client", testpeer.GoSDK, testpeer.RunMCPGo, mcp.Version20251125},
		{"mcpgo/gosdk-client", testpeer.MCPGo, testpeer.RunGoSDK, mcp.Version20251125},
		{"mcpgo/mcpgo-client", testpeer.MCPGo, testpeer.RunMCPGo, mcp.Version20251125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := upstreamServer(t, tt.kind, testpeer.HTTPServerOptions{})
			bridge := func(path string) (testpeer.Transcript, *cassettes.Cassette) {
				t.Helper()
				rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
				if err != nil {
					t.Fatal(err)
				}
				clientR, bridgeW := io.Pipe()
				bridgeR, clientW := io.Pipe()
				bridged := make(chan error, 1)
				go func() {
					err := StdioToHTTP(testCtx(t), up.URL+path, bridgeR, bridgeW, rec, nil)
					bridgeW.Close()
					bridged <- err
				}()
				tr, err := tt.client(testCtx(t), clientR, clientW, testpeer.ClientOptions{ProtocolVersion: tt.protocol})
				if err != nil {
					t.Fatalf("through the bridge to %s: %v", path, err)
				}
				clientW.Close()
				if err := <-bridged; err != nil {
					t.Fatalf("bridge: %v", err)
				}
				if err := rec.Close(); err != nil {
					t.Fatal(err)
				}
				return tr, rec.Cassette()
			}
			streamable, _ := bridge("/mcp")
			sse, c := bridge("/sse")
			if diff := cmp.Diff(streamable, sse); diff != "" {
				t.Errorf("the stdio client saw something else (-Streamable HTTP +HTTP+SSE):\n%s", diff)
			}
			answered := 0
			for _, in := range c.Interactions {
				if in.Request != nil && in.Response != nil {
					answered++
				}
			}
			if answered < len(sse) {
				t.Errorf("the recording holds %d answered requests, want at least %d (one a call of the transcript)", answered, len(sse))
			}
		})
	}
}
