//go:build unix

package main

import (
	"context"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// kill -USR1 makes mcpmock send notifications/tools/list_changed to every
// session: a real go-sdk client gets it over stdio and over Streamable
// HTTP (on its GET stream).
func TestReplaySIGUSR1ListChanged(t *testing.T) {
	path := toolsCassette(t)
	for _, overHTTP := range []bool{false, true} {
		changed := make(chan struct{}, 1)
		opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
		var p *proc
		var cs *mcp.ClientSession
		if overHTTP {
			var url string
			p, url = startListening(t, "replay", "-c", path, "--listen", "127.0.0.1:0")
			cs = httpSession(t, url, opts)
		} else {
			p = start(t, "replay", "-c", path)
			cs = stdioSession(t, p, opts)
		}
		// A listing first: the session is served, its outlet attached
		// (and, over HTTP, the client's GET stream is opening).
		if names, _ := followPages(t, cs); names != "a,b,c,d,e" {
			t.Fatalf("tools %s", names)
		}
		// Over HTTP a notification for a GET stream not yet open is
		// queued for it.
		if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-testContext(t).Done():
			t.Fatalf("HTTP %v: no notifications/tools/list_changed; log:\n%s", overHTTP, p.stderr)
		}
		if names, _ := followPages(t, cs); names != "a,b,c,d,e" {
			t.Errorf("HTTP %v: tools after the change %s", overHTTP, names)
		}
		cs.Close()
	}
}
