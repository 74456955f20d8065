package replayer_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// recordThroughTap connects a server and a client by in-process stdio
// pipes through a line tap that feeds a Recorder, runs the client until it
// returns, and returns the cassette.
func recordThroughTap(t *testing.T, serve func(ctx context.Context, r io.ReadCloser, w io.WriteCloser), client func(ctx context.Context, r io.ReadCloser, w io.WriteCloser)) *cassettes.Cassette {
	t.Helper()
	rec, err := recorder.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	clientR, clientW, tapFromClient, tapToClient := pipePair()
	serverR, tapToServer := io.Pipe()
	tapFromServer, serverW := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		serve(ctx, serverR, serverW)
		serverW.Close()
	}()
	go relayLines(&wg, rec, cassettes.FromClient, tapFromClient, tapToServer)
	go relayLines(&wg, rec, cassettes.FromServer, tapFromServer, tapToClient)
	client(ctx, clientR, clientW)
	clientW.Close()
	serverR.Close()
	cancel()
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Cassette()
}

// recordGoSDK records what run does with a real go-sdk client connected to
// server over in-process stdio through a tap, and returns the cassette.
func recordGoSDK(t *testing.T, server *mcp.Server, client *mcp.Client, version string, run func(context.Context, *mcp.ClientSession) error) *cassettes.Cassette {
	t.Helper()
	return recordThroughTap(t, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) {
		server.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
	}, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) {
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, cs); err != nil {
			t.Fatalf("live: %v", err)
		}
		cs.Close()
	})
}

// replayGoSDK runs run with a real go-sdk client connected to a replay of
// c, over stdio (Engine.Serve) or Streamable HTTP (Engine.Handler).
func replayGoSDK(t *testing.T, c *cassettes.Cassette, opts *replayer.Options, overHTTP bool, client *mcp.Client, version string, run func(context.Context, *mcp.ClientSession) error) error {
	t.Helper()
	e, err := replayer.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var tr mcp.Transport
	if overHTTP {
		h := e.Handler(nil)
		srv := httptest.NewServer(h)
		defer srv.Close()
		defer h.Close()
		tr = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
	} else {
		clientR, clientW, serverR, serverW := pipePair()
		done := make(chan struct{})
		go func() {
			e.Serve(ctx, serverR, serverW)
			serverW.Close()
			close(done)
		}()
		defer func() { <-done }()
		defer clientW.Close()
		tr = &mcp.IOTransport{Reader: clientR, Writer: clientW}
	}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return err
	}
	defer cs.Close()
	return run(ctx, cs)
}

// logClient is a go-sdk client that collects the log messages it gets.
func logClient(logs *[]string, mu *sync.Mutex) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "log-client", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			*logs = append(*logs, fmt.Sprintf("%s %v", req.Params.Level, req.Params.Data))
			mu.Unlock()
		},
	})
}

// callLog calls the protocol server's log tool (a debug line and a
// warning), with level in the request's _meta unless it is "".
func callLog(level string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		p := &mcp.CallToolParams{Name: "log"}
		if level != "" {
			p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": level}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return err
		}
		if res.IsError || res.Content[0].(*mcp.TextContent).Text != "logged" {
			return fmt.Errorf("log: %+v", res)
		}
		return nil
	}
}

// 2026-07-28: notifications/message is request-scoped. A recording made
// with logLevel debug replays, to a real go-sdk client over stdio and
// Streamable HTTP, only the messages at or above the live request's
// _meta logLevel, none without it; a logLevel that is no level is -32602.
func TestPerRequestLogLevel2026(t *testing.T) {
	const version = "2026-07-28"
	var mu sync.Mutex
	var logs []string
	c := recordGoSDK(t, protocolServer(0), logClient(&logs, &mu), version, callLog("debug"))
	mu.Lock()
	if strings.Join(logs, ",") != "debug a debug line,warning a warning" {
		t.Fatalf("the live session logged %q", logs)
	}
	mu.Unlock()
	for _, overHTTP := range []bool{false, true} {
		for level, want := range map[string]string{"debug": "debug a debug line,warning a warning", "warning": "warning a warning", "error": "", "": ""} {
			logs = nil
			if err := replayGoSDK(t, c, nil, overHTTP, logClient(&logs, &mu), version, callLog(level)); err != nil {
				t.Fatalf("HTTP %v, level %q: %v", overHTTP, level, err)
			}
			mu.Lock()
			if got := strings.Join(logs, ","); got != want {
				t.Errorf("HTTP %v, level %q: the replay logged %q, want %q", overHTTP, level, got, want)
			}
			mu.Unlock()
		}
		err := replayGoSDK(t, c, nil, overHTTP, logClient(&logs, &mu), version, callLog("loud"))
		if err == nil || !strings.Contains(err.Error(), "unknown logging level") {
			t.Errorf("HTTP %v, level \"loud\": %v, want -32602", overHTTP, err)
		}
	}
}

// The stateful era keeps logging/setLevel: a 2025-11-25 session that sets
// "warning" gets the warning alone, from a recording that had both.
func TestSetLevelStillFilters(t *testing.T) {
	const version = "2025-11-25"
	var mu sync.Mutex
	var logs []string
	setThenLog := func(level string) func(context.Context, *mcp.ClientSession) error {
		return func(ctx context.Context, cs *mcp.ClientSession) error {
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
				return err
			}
			return callLog("")(ctx, cs)
		}
	}
	c := recordGoSDK(t, protocolServer(0), logClient(&logs, &mu), version, setThenLog("debug"))
	for _, overHTTP := range []bool{false, true} {
		logs = nil
		if err := replayGoSDK(t, c, nil, overHTTP, logClient(&logs, &mu), version, setThenLog("warning")); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if got := strings.Join(logs, ","); got != "warning a warning" {
			t.Errorf("HTTP %v: the replay logged %q", overHTTP, got)
		}
		mu.Unlock()
	}
}
