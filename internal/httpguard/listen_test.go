package httpguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
)

// fakeLookup resolves the names of the tests without DNS.
func fakeLookup(_ context.Context, host string) ([]net.IPAddr, error) {
	ips := map[string][]string{
		"localhost":         {"127.0.0.1", "::1"},
		"v6only.test":       {"::1"},
		"lan.test":          {"192.168.1.20"},
		"mixed.test":        {"127.0.0.1", "10.0.0.7"},
		"mapped.test":       {"::ffff:10.0.0.7"},
		"mapped-local.test": {"::ffff:127.0.0.1"},
	}[host]
	if ips == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// TestListenAddressForms is the table of --listen forms: each binds a
// loopback address or is refused with ErrNotLoopback, with or without a
// port, before anything is bound.
func TestListenAddressForms(t *testing.T) {
	const refused = "refused"
	for _, tt := range []struct {
		addr string
		want string // the bound IP, or refused
	}{
		{"", "127.0.0.1"},
		{":0", "127.0.0.1"},
		{"0", "127.0.0.1"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:0", "127.0.0.1"},
		{"127.0.0.2:0", "127.0.0.2"},
		{"localhost", "127.0.0.1"},
		{"localhost:0", "127.0.0.1"},
		{"v6only.test:0", "::1"},
		{"[::1]", "::1"},
		{"[::1]:0", "::1"},
		{"::1", "::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"[::ffff:127.0.0.1]:0", "127.0.0.1"},
		{"mapped-local.test:0", "127.0.0.1"},
		{"0.0.0.0", refused},
		{"0.0.0.0:0", refused},
		{"::", refused},
		{"[::]", refused},
		{"[::]:0", refused},
		{"::ffff:0.0.0.0", refused},
		{"[::ffff:0.0.0.0]:0", refused},
		{"192.168.1.20:0", refused},
		{"10.0.0.1", refused},
		{"::ffff:10.0.0.1", refused},
		{"fe80::1%lo", refused},
		{"[2001:db8::1]:0", refused},
		{"lan.test", refused},
		{"lan.test:0", refused},
		{"mixed.test:0", refused},
		{"mapped.test:0", refused},
	} {
		t.Run(fmt.Sprintf("%q", tt.addr), func(t *testing.T) {
			l, err := Listen(t.Context(), tt.addr, &ListenOptions{LookupIPAddr: fakeLookup})
			if tt.want == refused {
				if err == nil {
					l.Close()
					t.Fatalf("Listen(%q) bound %v, want it refused", tt.addr, l.Addr())
				}
				if !errors.Is(err, ErrNotLoopback) {
					t.Fatalf("Listen(%q) = %v, want an error wrapping ErrNotLoopback", tt.addr, err)
				}
				if !strings.Contains(err.Error(), tt.addr) {
					t.Errorf("the error %q does not name the address %q", err, tt.addr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Listen(%q): %v", tt.addr, err)
			}
			t.Cleanup(func() { l.Close() })
			a := l.Addr().(*net.TCPAddr)
			if a.IP.String() != tt.want || a.Port == 0 {
				t.Errorf("Listen(%q) bound %v, want %s and a free port", tt.addr, a, tt.want)
			}
			if w := RemoteWarning(l); w != "" {
				t.Errorf("RemoteWarning of a loopback listener = %q, want none", w)
			}
		})
	}
}

// TestListenRefusalSaysWhy checks the refusal's words: what the address is
// and what to do.
func TestListenRefusalSaysWhy(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0":   "0.0.0.0 is every interface",
		"[::]:8080": ":: is every interface",
		"lan.test":  "lan.test resolves to 192.168.1.20",
	} {
		_, err := Listen(t.Context(), addr, &ListenOptions{LookupIPAddr: fakeLookup})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("Listen(%q) = %v, want an error saying %q and naming --allow-remote", addr, err, want)
		}
	}
}

// fakeListener is a listener bound (on paper) to addr.
type fakeListener struct {
	net.Listener
	addr *net.TCPAddr
}

func (f fakeListener) Addr() net.Addr { return f.addr }

// TestURLTellsTheBoundAddress: the URL of a listener on every interface
// says so (it used to say 127.0.0.1), and a warning line comes with it.
func TestURLTellsTheBoundAddress(t *testing.T) {
	for _, tt := range []struct {
		ip, url, warning string
	}{
		{"127.0.0.1", "http://127.0.0.1:8080/mcp", ""},
		{"::1", "http://[::1]:8080/mcp", ""},
		{"0.0.0.0", "http://0.0.0.0:8080/mcp", "every interface (0.0.0.0:8080)"},
		{"::", "http://[::]:8080/mcp", "every interface ([::]:8080)"},
		{"192.168.1.20", "http://192.168.1.20:8080/mcp", "192.168.1.20:8080, not loopback"},
	} {
		l := fakeListener{addr: &net.TCPAddr{IP: net.ParseIP(tt.ip), Port: 8080}}
		if got := URL(l, "mcp"); got != tt.url {
			t.Errorf("URL on %s = %q, want %q", tt.ip, got, tt.url)
		}
		if got := URLLine(l, "/mcp"); got != "mcpmock: listening on "+tt.url {
			t.Errorf("URLLine on %s = %q", tt.ip, got)
		}
		got := RemoteWarning(l)
		if (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
			t.Errorf("RemoteWarning on %s = %q, want one containing %q", tt.ip, got, tt.warning)
		}
	}
}

func TestURLLine(t *testing.T) {
	l, err := Listen(t.Context(), ":0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	line := URLLine(l, "/mcp")
	port := l.Addr().(*net.TCPAddr).Port
	if want := fmt.Sprintf("mcpmock: listening on http://127.0.0.1:%d/mcp", port); line != want {
		t.Errorf("URLLine = %q, want %q", line, want)
	}
	if !regexp.MustCompile(`^mcpmock: listening on http://127\.0\.0\.1:\d+/mcp$`).MatchString(line) {
		t.Errorf("URLLine %q does not have the contract's form", line)
	}
}
