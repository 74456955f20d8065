package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestListenRefusesNonLoopbackThroughBinary runs replay and record with
// every form of an address that is not loopback, with and without a port:
// each exits with status 2 before it serves, naming --allow-remote. (A
// --listen of 0.0.0.0 or :: without a port used to bind every interface and
// print a 127.0.0.1 URL.)
func TestListenRefusesNonLoopbackThroughBinary(t *testing.T) {
	cassette := writeCassette(t)
	commands := map[string]func(addr string) []string{
		"replay": func(addr string) []string { return []string{"replay", "-c", cassette, "--listen", addr} },
		"record upstream": func(addr string) []string {
			return []string{"record", "-c", tempCassette(t), "--upstream", "http://127.0.0.1:9/mcp", "--listen", addr}
		},
		"record command": func(addr string) []string {
			return append([]string{"record", "-c", tempCassette(t), "--listen", addr, "--"}, peerCommand(testpeer.GoSDK)...)
		},
	}
	for name, args := range commands {
		for _, addr := range []string{"0.0.0.0", "::", "[::]", "[::]:0", "0.0.0.0:0", "::ffff:0.0.0.0", "[::ffff:0.0.0.0]:0"} {
			t.Run(fmt.Sprintf("%s %s", name, addr), func(t *testing.T) {
				t.Parallel()
				p := start(t, args(addr)...)
				if status := p.wait(t); status != 2 {
					t.Fatalf("exit status %d, want 2 (a usage error); stderr:\n%s", status, p.stderr)
				}
				stderr := p.stderr.String()
				if strings.Contains(stderr, "listening on") || !strings.Contains(stderr, "every interface") || !strings.Contains(stderr, "--allow-remote") {
					t.Errorf("stderr does not refuse the address naming --allow-remote, or it served:\n%s", stderr)
				}
				// The refusal comes first; replay prints no summary of a
				// session that never was, and record's says nothing was saved.
				if strings.Contains(stderr, "replayed") ||
					strings.Contains(stderr, "recorded") && !strings.Contains(stderr, "nothing saved") ||
					!strings.HasPrefix(stderr, "mcpmock: --listen") {
					t.Errorf("a refused --listen printed a summary, or not after the refusal:\n%s", stderr)
				}
			})
		}
	}
}

// TestListenHostWithoutPortThroughBinary: a loopback host without a port
// takes a free port on it, and the printed URL is the bound address.
func TestListenHostWithoutPortThroughBinary(t *testing.T) {
	cassette := writeCassette(t)
	for _, addr := range []string{"localhost", "127.0.0.1", ":0"} {
		t.Run(addr, func(t *testing.T) {
			p, url := startListening(t, "replay", "-c", cassette, "--listen", addr)
			if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0/mcp") {
				t.Errorf("URL %q, want one on 127.0.0.1 with a free port", url)
			}
			if s := p.stderr.String(); strings.Contains(s, "warning") {
				t.Errorf("a loopback listener warned:\n%s", s)
			}
		})
	}
}
