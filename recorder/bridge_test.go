package recorder

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
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
