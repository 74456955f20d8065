package replayer_test

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
	"github.com/mcpmock/mcpmock/recorder"
	"github.com/mcpmock/mcpmock/replayer"
)

// recordStdio runs a go-sdk scripted client against a real server of the
// given kind over in-process stdio pipes, through a line tap that feeds a
// Recorder, and returns the cassette and what the live client saw.
func recordStdio(t *testing.T, kind string, opts testpeer.ClientOptions) (*cassettes.Cassette, testpeer.Transcript) {
	t.Helper()
	rec, err := recorder.New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	clientToTap, clientW := io.Pipe()
	tapToServer, serverIn := io.Pipe()
	serverOut, serverToTap := io.Pipe()
	clientR, tapToClient := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		testpeer.Serve(ctx, kind, tapToServer, serverToTap)
	}()
	go relayLines(&wg, rec, cassettes.FromClient, clientToTap, serverIn)
	go relayLines(&wg, rec, cassettes.FromServer, serverOut, tapToClient)
	live, err := testpeer.RunGoSDK(ctx, clientR, clientW, opts)
	if err != nil {
		t.Fatalf("live session: %v", err)
	}
	clientW.Close()
	clientR.Close()
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Cassette(), live
}

// replayHTTP serves a cassette over HTTP on a loopback test server.
func replayHTTP(t *testing.T, c *cassettes.Cassette, opts *replayer.HTTPOptions) (*httptest.Server, *replayer.Engine, *replayer.HTTPHandler) {
	t.Helper()
	e, err := replayer.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv, e, h
}

type httpClient struct {
	name string
	run  func(ctx context.Context, url string, opts testpeer.HTTPOptions) (testpeer.Transcript, error)
	sse  bool
}

var httpClients = []httpClient{
	{"gosdk-streamable", testpeer.RunGoSDKHTTP, false},
	{"gosdk-sse", testpeer.RunGoSDKHTTP, true},
	{"mcpgo-streamable", testpeer.RunMCPGoHTTP, false},
	{"mcpgo-sse", testpeer.RunMCPGoHTTP, true},
}

// TestStdioCassetteReplaysOverHTTP records real go-sdk and mcp-go servers
// over stdio in both eras, then replays each cassette over Streamable HTTP
// and HTTP+SSE to the go-sdk and mcp-go clients: each must see what the live
// client saw.
func TestStdioCassetteReplaysOverHTTP(t *testing.T) {
	eras := []struct {
		name    string
		version string
	}{
		{"default", ""},
		{"stateful", "2025-11-25"},
	}
	for _, kind := range testpeer.Kinds {
		for _, era := range eras {
			t.Run(kind+"/"+era.name, func(t *testing.T) {
				c, live := recordStdio(t, kind, testpeer.ClientOptions{ProtocolVersion: era.version})
				if len(live) == 0 {
					t.Fatal("the live session saw nothing")
				}
				srv, _, _ := replayHTTP(t, c, nil)
				for _, cl := range httpClients {
					t.Run(cl.name, func(t *testing.T) {
						url := srv.URL + "/mcp"
						if cl.sse {
							url = srv.URL + "/sse"
						}
						ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
						defer cancel()
						got, err := cl.run(ctx, url, testpeer.HTTPOptions{SSE: cl.sse, ClientOptions: testpeer.ClientOptions{ProtocolVersion: era.version}})
						if err != nil {
							t.Fatalf("replay: %v\nsaw so far:\n%s", err, got)
						}
						if diff := cmp.Diff(live, got); diff != "" {
							t.Errorf("replay over HTTP differs from the live session (-live +replay):\n%s", diff)
						}
					})
				}
			})
		}
	}
}

// relayLines is an in-process tap for tests: it copies r to w line by line,
// giving rec a copy of each line first, as recorder.Stdio does.
func relayLines(wg *sync.WaitGroup, rec *recorder.Recorder, from cassettes.Direction, r io.ReadCloser, w io.WriteCloser) {
	defer wg.Done()
	defer w.Close()
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			rec.Observe(from, line[:len(line)-1], time.Now())
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
