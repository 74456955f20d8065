// Package testpeer provides real MCP peers for mcpmock's tests: servers built
// with the official go-sdk and with mcp-go that expose the same tools, and
// scripted clients of both libraries that report what they saw as a
// library-independent [Transcript].
//
// A test binary becomes a stdio server when its TestMain calls [Main]:
//
//	func TestMain(m *testing.M) {
//		testpeer.Main()
//		os.Exit(m.Run())
//	}
//
//	argv, env := testpeer.Command(testpeer.GoSDK)
//	cmd := exec.Command(argv[0], argv[1:]...)
//	cmd.Env = append(os.Environ(), env...)
//
// In-process, [Serve] runs a server on any pair of streams, and [RunGoSDK] or
// [RunMCPGo] runs the script against it:
//
//	tr, err := testpeer.RunGoSDK(ctx, fromServer, toServer, testpeer.ClientOptions{})
package testpeer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Server kinds accepted by [Serve], [Main] and [Command].
const (
	// GoSDK is a go-sdk server speaking every protocol version, including
	// 2026-07-28 (server/discover).
	GoSDK = "gosdk"
	// GoSDKLegacy is a go-sdk server whose connection answers server/discover
	// with JSON-RPC error -32601 (method not found), as a server of the
	// stateful era does, so that clients fall back to initialize and speak
	// 2025-11-25.
	GoSDKLegacy = "gosdk-legacy"
	// MCPGo is an mcp-go server with the same tools.
	MCPGo = "mcpgo"
)

// EnvVar is the environment variable that makes [Main] serve: its value is a
// server kind.
const EnvVar = "MCPMOCK_TESTPEER"

// Kinds lists every server kind.
var Kinds = []string{GoSDK, GoSDKLegacy, MCPGo}

// crashExitStatus is the exit status of a server process whose crash tool is
// called.
const crashExitStatus = 3

// Serve runs the server of the given kind on r (client to server) and w
// (server to client), newline-delimited JSON-RPC as on stdio, until r reaches
// EOF, ctx ends, or the crash tool is called (then w and r are closed at once,
// without an answer, as if the process had died). Serve closes r and w before
// it returns; r's Close must unblock a pending Read, as it does for pipes.
func Serve(ctx context.Context, kind string, r io.ReadCloser, w io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	crash := func() {
		// Die mid-call: the client sees EOF and no answer, and the
		// server's read loop ends, which cancels the call.
		w.Close()
		r.Close()
		cancel()
	}
	return serve(ctx, kind, r, w, crash)
}

func serve(ctx context.Context, kind string, r io.ReadCloser, w io.WriteCloser, crash func()) error {
	defer r.Close()
	defer w.Close()
	switch kind {
	case GoSDK:
		return serveGoSDK(ctx, r, w, false, crash)
	case GoSDKLegacy:
		return serveGoSDK(ctx, r, w, true, crash)
	case MCPGo:
		return serveMCPGo(ctx, r, w, crash)
	case GoSDKEverything: // everything.go
		return serveGoSDKEverything(ctx, r, w)
	case MCPGoEverything:
		return serveMCPGoEverything(ctx, r, w)
	default:
		return fmt.Errorf("testpeer: unknown server kind %q (want one of %q)", kind, Kinds)
	}
}

// Main is called from a TestMain. If the environment variable
// MCPMOCK_TESTPEER names a server kind, Main serves that kind on os.Stdin and
// os.Stdout and exits the process: status 0 when stdin reaches EOF, 3 when the
// crash tool is called, 1 on any other failure. Otherwise Main returns at once.
func Main() {
	kind := os.Getenv(EnvVar)
	if kind == "" {
		return
	}
	if run, ok := faultyKinds[kind]; ok { // faulty.go
		os.Exit(run())
	}
	crash := func() { os.Exit(crashExitStatus) }
	err := serve(context.Background(), kind, os.Stdin, os.Stdout, crash)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "testpeer %s: %v\n", kind, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns the argv and the extra environment that make the current
// test binary (os.Args[0]) a stdio server of the given kind. The binary's
// TestMain must call [Main]. The argv also selects no tests, so that a binary
// whose TestMain forgot Main exits instead of running its tests again.
func Command(kind string) (argv []string, env []string) {
	exe := os.Args[0]
	if abs, err := filepath.Abs(exe); err == nil && filepath.Base(exe) != exe {
		exe = abs
	}
	return []string{exe, "-test.run=^$"}, []string{EnvVar + "=" + kind}
}
