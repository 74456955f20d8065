package replayer_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

func TestProtocol2026ReplaysToRealClient(t *testing.T) {
	c, live := recordProtocol(t, 3, "2026-07-28")
	got, err := replayStdio(t, c, nil, "octocat", "2026-07-28")
	if err != nil {
		t.Fatalf("stdio replay: %v (so far %q)", err, got)
	}
	if strings.Join(live, "\n") != strings.Join(got, "\n") {
		t.Errorf("stdio replay differs:\nlive   %q\nreplay %q", live, got)
	}
	got, err = replayStreamable(t, c, nil, "2026-07-28")
	if err != nil {
		t.Fatalf("HTTP replay: %v (so far %q)", err, got)
	}
	if strings.Join(live, "\n") != strings.Join(got, "\n") {
		t.Errorf("HTTP replay differs:\nlive   %q\nreplay %q", live, got)
	}
}

// A list change from Go and from the control endpoint reaches a real
// client on its stream, and a scripted one follows the Nth call.
func TestScriptedListChanges(t *testing.T) {
	c, _ := recordProtocol(t, 0, "2025-11-25")
	over := &cassettes.Cassette{Version: 1, Interactions: []cassettes.Interaction{{
		From:    cassettes.FromClient,
		Request: []byte(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"roots"}}`),
		When:    &cassettes.When{Nth: 2},
		Fault:   &cassettes.Fault{Notify: []string{"notifications/tools/list_changed"}},
	}}}
	e, err := replayer.New(c, &replayer.Options{Overlays: []*cassettes.Cassette{over}})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler(&replayer.HTTPOptions{Control: true})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, transport := range []string{"stdio", "http"} {
		pc := newProtocolClient("octocat")
		var cs *mcp.ClientSession
		if transport == "stdio" {
			clientR, clientW, serverR, serverW := pipePair()
			go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
			defer clientW.Close()
			cs, err = pc.client().Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		} else {
			cs, err = pc.client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		}
		if err != nil {
			t.Fatal(err)
		}
		wait := func(what string) {
			t.Helper()
			select {
			case <-pc.changed:
			case <-ctx.Done():
				t.Fatalf("%s: no tools/list_changed after %s", transport, what)
			}
		}
		// The first list, then the scripted change after the second call of roots.
		if tools, _ := listAll(ctx, cs); strings.Contains(tools, "extra") {
			t.Errorf("%s: first list %s", transport, tools)
		}
		for range 2 {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots"}); err != nil {
				t.Fatal(err)
			}
		}
		wait("the second call")
		// A tools/list after the change answers the changed list.
		if tools, _ := listAll(ctx, cs); !strings.Contains(tools, "extra") {
			t.Errorf("%s: after the change: %s", transport, tools)
		}
		// From Go (on HTTP, queued for the GET stream until it opens).
		if n := e.Notify("notifications/tools/list_changed", nil); n < 1 {
			t.Errorf("%s: Notify reached %d sessions", transport, n)
		}
		wait("Engine.Notify")
		if transport == "http" {
			resp, err := http.Post(srv.URL+"/_mcpmock/notify?method=notifications/tools/list_changed", "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"sessions":`) {
				t.Errorf("control endpoint: %d %s", resp.StatusCode, body)
			}
			wait("the control endpoint")
		}
		cs.Close()
	}
}

func TestCursorErrors(t *testing.T) {
	c, _ := recordProtocol(t, 2, "2025-11-25")
	for _, size := range []int{0, 2} {
		e, err := replayer.New(c, &replayer.Options{PageSize: size})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		clientR, clientW, serverR, serverW := pipePair()
		go func() { e.Serve(ctx, serverR, serverW); serverW.Close() }()
		pc := newProtocolClient("octocat")
		cs, err := pc.client().Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "bogus"})
		if err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "cursor") {
			t.Errorf("page size %d: unknown cursor: %v", size, err)
		}
		if size > 0 {
			first, err := cs.ListTools(ctx, nil)
			if err != nil || first.NextCursor == "" {
				t.Fatalf("first page: %v %+v", err, first)
			}
			e.Notify("notifications/tools/list_changed", nil)
			<-pc.changed
			if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: first.NextCursor}); err == nil || !strings.Contains(err.Error(), "stale") {
				t.Errorf("stale cursor: %v", err)
			}
		}
		cs.Close()
		clientW.Close()
		cancel()
	}
}
