package testpeer

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEverythingLive: the server-everything look-alikes, over pipes and
// over Streamable HTTP, send what the client's notifications cause after
// them, and a call's notifications before its result, every run the same.
func TestEverythingLive(t *testing.T) {
	for _, kind := range EverythingKinds {
		for _, transport := range []string{"stdio", "http", "stdio-mcpgo-client", "http-mcpgo-client"} {
			t.Run(kind+"/"+transport, func(t *testing.T) {
				t.Parallel()
				if kind == MCPGoEverything && transport == "http-mcpgo-client" {
					// 2 of 20 runs: the client's GET stream comes too
					// early for the server, the client stops listening,
					// and nothing the server sends on its own arrives.
					t.Skip("mcp-go's client and server over Streamable HTTP: the effects of notifications/initialized sometimes never arrive")
				}
				var run func() (Wire, error)
				switch transport {
				case "stdio", "stdio-mcpgo-client":
					cr, sw := io.Pipe()
					sr, cw := io.Pipe()
					done := make(chan error, 1)
					go func() { done <- Serve(t.Context(), kind, sr, sw) }()
					t.Cleanup(func() { cw.Close(); <-done })
					run = func() (Wire, error) { return RunEverything(t.Context(), cr, cw, EverythingOptions{}) }
					if transport == "stdio-mcpgo-client" {
						run = func() (Wire, error) { return RunEverythingMCPGo(t.Context(), cr, cw, EverythingOptions{}) }
					}
				case "http", "http-mcpgo-client":
					h, err := NewEverythingHTTP(kind)
					if err != nil {
						t.Fatal(err)
					}
					s := httptest.NewServer(h)
					t.Cleanup(func() { s.Close(); h.Close() })
					run = func() (Wire, error) { return RunEverythingHTTP(t.Context(), s.URL+"/mcp", EverythingOptions{}) }
					if transport == "http-mcpgo-client" {
						run = func() (Wire, error) { return RunEverythingMCPGoHTTP(t.Context(), s.URL+"/mcp", EverythingOptions{}) }
					}
				}
				w, err := run()
				if err != nil {
					t.Fatalf("%v; the wire:\n%s", err, w)
				}
				if kind == MCPGoEverything && strings.HasPrefix(transport, "http") {
					w = w.SortCalls()
				}
				if p := EverythingCauses(w); len(p) > 0 {
					t.Errorf("out of order: %q", p)
				}
				if diff := cmp.Diff(EverythingWire(0), w); diff != "" {
					t.Errorf("the wire (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestEverythingCauses: the order check finds each effect moved before its
// cause, and a call's notification moved after its result.
func TestEverythingCauses(t *testing.T) {
	want := EverythingWire(0)
	move := func(from, to int) Wire {
		w := append(Wire(nil), want...)
		line := w[from]
		w = append(w[:from], w[from+1:]...)
		return append(w[:to], append(Wire{line}, w[to:]...)...)
	}
	if p := EverythingCauses(want); len(p) != 0 {
		t.Fatalf("the live wire: %q", p)
	}
	tests := []struct {
		name string
		w    Wire
		want string
	}{
		{"roots/list before initialized", move(5, 2), `"< roots/list" (message 3) came before its cause "> notifications/initialized"`},
		{"list_changed before initialized", move(3, 2), `"< notifications/tools/list_changed" (message 3) came before its cause`},
		{"roots/list before roots/list_changed", move(11, 10), `"< roots/list" (message 11) came before its cause "> notifications/roots/list_changed" (message 12)`},
		{"log before the reply", move(7, 6), `came before its cause "> result roots/list 2:`},
		{"resources/updated after the result", move(15, 16), `"< notifications/resources/updated test://static/resource/1" (message 17) came after`},
		{"progress after the result", move(18, 21), `"< notifications/progress 1/3 \"step 1 of 3\"" (message 22) came after`},
		{"no roots/list_changed", append(want[:10:10], want[11:]...), `no "> notifications/roots/list_changed"`},
	}
	for _, tt := range tests {
		got := strings.Join(EverythingCauses(tt.w), "\n")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if diff := cmp.Diff(want, move(15, 16).SortCalls()); diff != "" {
		t.Errorf("SortCalls (-want +got):\n%s", diff)
	}
}
