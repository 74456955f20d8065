package recorder

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

func TestMain(m *testing.M) {
	testpeer.Main()
	os.Exit(m.Run())
}

type stdioClient func(ctx context.Context, r io.ReadCloser, w io.WriteCloser, opts testpeer.ClientOptions) (testpeer.Transcript, error)

// TestBridgeStdioClientToHTTPServer: a stdio client reaches an HTTP server
// through StdioToHTTP and sees what an HTTP client sees directly.
func TestBridgeStdioClientToHTTPServer(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		server   testpeer.HTTPServerOptions
		client   stdioClient
		protocol string
	}{
		{"gosdk/gosdk-client", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunGoSDK, ""},
		{"gosdk/mcpgo-client/2025-11-25", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunMCPGo, "2025-11-25"},
		{"gosdk-json/gosdk-client/2025-11-25", testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true}, testpeer.RunGoSDK, "2025-11-25"},
		{"mcpgo-stateless/mcpgo-client", testpeer.MCPGo, testpeer.HTTPServerOptions{Stateless: true}, testpeer.RunMCPGo, ""},
		{"mcpgo/gosdk-client/2025-11-25", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunGoSDK, "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := upstreamServer(t, tt.kind, tt.server)
			copts := testpeer.ClientOptions{ProtocolVersion: tt.protocol}
			direct, err := testpeer.RunGoSDKHTTP(testCtx(t), up.URL+"/mcp", testpeer.HTTPOptions{ClientOptions: copts})
			if err != nil {
				t.Fatalf("direct: %v", err)
			}
			rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
			if err != nil {
				t.Fatal(err)
			}
			clientR, bridgeW := io.Pipe()
			bridgeR, clientW := io.Pipe()
			bridged := make(chan error, 1)
			go func() {
				err := StdioToHTTP(testCtx(t), up.URL+"/mcp", bridgeR, bridgeW, rec, nil)
				bridgeW.Close()
				bridged <- err
			}()
			tr, err := tt.client(testCtx(t), clientR, clientW, copts)
			if err != nil {
				t.Fatalf("through the bridge: %v", err)
			}
			clientW.Close()
			if err := <-bridged; err != nil {
				t.Fatalf("bridge: %v", err)
			}
			if diff := cmp.Diff(direct, tr); diff != "" {
				t.Errorf("the stdio client saw something else (-http client direct +stdio client bridged):\n%s", diff)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			c := rec.Cassette()
			checkHTTPCassette(t, c, "", false, false)
		})
	}
}

// TestBridgeHTTPClientToStdioServer: HTTP clients reach a stdio server
// through the StdioBridge and see what a stdio client sees directly.
func TestBridgeHTTPClientToStdioServer(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		client   httpClient
		protocol string
	}{
		{"gosdk/gosdk-client", testpeer.GoSDK, testpeer.RunGoSDKHTTP, ""},
		{"gosdk/mcpgo-client/2025-11-25", testpeer.GoSDK, testpeer.RunMCPGoHTTP, "2025-11-25"},
		{"gosdk-legacy/gosdk-client", testpeer.GoSDKLegacy, testpeer.RunGoSDKHTTP, ""},
		{"mcpgo/mcpgo-client", testpeer.MCPGo, testpeer.RunMCPGoHTTP, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			copts := testpeer.ClientOptions{ProtocolVersion: tt.protocol}
			direct := directStdio(t, tt.kind, copts)
			rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
			if err != nil {
				t.Fatal(err)
			}
			argv, env := testpeer.Command(tt.kind)
			b, err := NewStdioBridge(argv, os.Stderr, rec, &BridgeOptions{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewServer(b)
			tr, err := tt.client(testCtx(t), s.URL+"/mcp", testpeer.HTTPOptions{ClientOptions: copts})
			if err != nil {
				t.Fatalf("through the bridge: %v", err)
			}
			s.CloseClientConnections()
			s.Close()
			if status, err := b.Close(); status != 0 || err != nil {
				t.Errorf("server exited with %d, %v", status, err)
			}
			if diff := cmp.Diff(direct, tr); diff != "" {
				t.Errorf("the HTTP client saw something else (-stdio direct +http bridged):\n%s", diff)
			}
			rec.Close()
			c := rec.Cassette()
			calls := 0
			for _, in := range c.Interactions {
				if in.From == cassettes.FromClient && in.Request != nil && in.Response != nil {
					calls++
				}
			}
			if calls < 10 {
				t.Errorf("%d answered requests recorded, want at least 10", calls)
			}
		})
	}
}

// directStdio runs the go-sdk scripted client against an in-process stdio
// server of kind.
func directStdio(t *testing.T, kind string, opts testpeer.ClientOptions) testpeer.Transcript {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go testpeer.Serve(testCtx(t), kind, sr, sw)
	tr, err := testpeer.RunGoSDK(testCtx(t), cr, cw, opts)
	if err != nil {
		t.Fatalf("direct: %v", err)
	}
	return tr
}

// TestBridgeUpstreamBreaksOff: an HTTP server that dies in the middle of a
// JSON answer, or that is down, gets the stdio client a JSON-RPC error for
// its request, not half a line; the bridge goes on.
func TestBridgeUpstreamBreaksOff(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res")
		buf.Flush()
	}))
	call, end := startBridge(t, up.URL+"/mcp", nil)
	if msg := call("1"); msg.ID != "1" || msg.Error == nil || !strings.Contains(msg.Error.Message, "broke off") {
		t.Fatalf("an answer broken off: %s, want an error for id 1", msg.Raw)
	}
	up.Close()
	if msg := call("2"); msg.ID != "2" || msg.Error == nil {
		t.Fatalf("the server down: %s, want an error for id 2", msg.Raw)
	}
	end()
}

// startBridge runs StdioToHTTP to upURL and returns a function that sends
// a ping of the given id and returns the message the client gets back, and
// one that ends the client's input and checks that the bridge ended well.
func startBridge(t *testing.T, upURL string, opts *BridgeOptions) (call func(id string) *jsonrpc.Message, end func()) {
	t.Helper()
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	clientR, bridgeW := io.Pipe()
	bridgeR, clientW := io.Pipe()
	bridged := make(chan error, 1)
	go func() {
		bridged <- StdioToHTTP(testCtx(t), upURL, bridgeR, bridgeW, rec, opts)
		bridgeW.Close()
	}()
	lines := jsonrpc.NewLineReader(clientR, 4<<20)
	call = func(id string) *jsonrpc.Message {
		t.Helper()
		io.WriteString(clientW, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`+"\n")
		line, err := lines.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		msg, err := jsonrpc.Parse(line)
		if err != nil {
			t.Fatalf("the client got %.200q: not a JSON-RPC message", line)
		}
		return msg
	}
	end = func() {
		t.Helper()
		clientW.Close()
		if err := <-bridged; err != nil {
			t.Errorf("StdioToHTTP: %v", err)
		}
	}
	return call, end
}
