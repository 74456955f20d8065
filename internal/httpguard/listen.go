package httpguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrNotLoopback is returned by Listen for an address that is not loopback
// (0.0.0.0, ::, a non-loopback IP, a name that resolves to one) when
// ListenOptions.AllowRemote is false.
var ErrNotLoopback = errors.New("not a loopback address")

// ListenOptions configure Listen. The zero value (or nil) binds loopback
// addresses only and resolves names with net.DefaultResolver.
type ListenOptions struct {
	// AllowRemote lets Listen bind any address (mcpmock's --allow-remote).
	// False refuses every address that is not loopback with ErrNotLoopback.
	AllowRemote bool
	// LookupIPAddr resolves a host name; nil means
	// net.DefaultResolver.LookupIPAddr. Tests inject one.
	LookupIPAddr func(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Listen listens on the TCP address addr, the one place that decides what
// a --listen address binds:
//
//   - no host (":8080", ":0", "8080", "0" or ""): 127.0.0.1;
//   - no port ("localhost", "[::1]", "::1", "127.0.0.1"): a free port;
//   - an IP address: that address; a name: the loopback address it resolves to.
//
// Without opts.AllowRemote, every host that is not loopback is refused with
// an error wrapping ErrNotLoopback, with or without a port: the unspecified
// addresses (0.0.0.0, ::, [::]:0, ::ffff:0.0.0.0), other IP addresses
// (IPv4-mapped ones are judged by their IPv4 address), and names that
// resolve to any non-loopback address. The bound address is checked again
// once bound.
func Listen(ctx context.Context, addr string, opts *ListenOptions) (net.Listener, error) {
	var o ListenOptions
	if opts != nil {
		o = *opts
	}
	host, port := splitListenAddr(addr)
	bind := host
	if !o.AllowRemote {
		var err error
		if bind, err = loopbackBind(ctx, host, o.LookupIPAddr); err != nil {
			return nil, fmt.Errorf("listen on %q: %w", addr, err)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		return nil, fmt.Errorf("listen on %q: %w", addr, err)
	}
	if a, ok := l.Addr().(*net.TCPAddr); ok && !o.AllowRemote && !a.IP.IsLoopback() {
		l.Close()
		return nil, fmt.Errorf("listen on %q: it bound %v, %w; add --allow-remote to serve other machines", addr, a, ErrNotLoopback)
	}
	return l, nil
}

// splitListenAddr splits a --listen address into host and port, the host
// without brackets, "127.0.0.1" when there is none and port "0" when there
// is none.
func splitListenAddr(addr string) (host, port string) {
	if h, p, err := net.SplitHostPort(addr); err == nil {
		host, port = h, p
	} else if isDigits(addr) {
		port = addr // "8080", "0": a lone port
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]") // "::", "[::1]", "localhost"
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "0"
	}
	return host, port
}

// loopbackBind returns the address to bind for host, an IP literal or a
// name: the host itself when it is a loopback IP, the first loopback address
// (IPv4 first) of a name whose every address is loopback; otherwise an
// error wrapping ErrNotLoopback that says what host is.
func loopbackBind(ctx context.Context, host string, lookup func(context.Context, string) ([]net.IPAddr, error)) (string, error) {
	refuse := func(what string) error {
		return fmt.Errorf("%s, %w: other machines could connect; use 127.0.0.1:PORT (or :PORT), or add --allow-remote to serve them on purpose", what, ErrNotLoopback)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		switch ip = ip.Unmap(); {
		case ip.IsUnspecified():
			return "", refuse(host + " is every interface")
		case !ip.IsLoopback():
			return "", refuse(host + " is not loopback")
		}
		return ip.String(), nil
	}
	if lookup == nil {
		lookup = net.DefaultResolver.LookupIPAddr
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", host, err)
	}
	bind := ""
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || !ip.Unmap().IsLoopback() {
			return "", refuse(fmt.Sprintf("%s resolves to %v", host, a.IP))
		}
		if ip = ip.Unmap(); bind == "" || ip.Is4() && !strings.Contains(bind, ".") {
			bind = ip.String()
		}
	}
	if bind == "" {
		return "", fmt.Errorf("resolve %q: no address", host)
	}
	return bind, nil
}

// IsLoopbackHost reports whether host (a name or an IP address, with or
// without a port, IPv6 with or without brackets) names the local machine:
// localhost, a name under .localhost, 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// URLLine returns the line that mcpmock prints to stderr once l accepts
// connections, exactly as the command-line contract writes it:
//
//	mcpmock: listening on http://127.0.0.1:41234/mcp
//
// The host is the address l is bound to, as it is: 0.0.0.0 or [::] for
// every interface.
func URLLine(l net.Listener, path string) string {
	return "mcpmock: listening on " + URL(l, path)
}

// RemoteWarning returns the line that mcpmock prints before URLLine when l
// is bound to an address that is not loopback, and "" when it is loopback.
func RemoteWarning(l net.Listener) string {
	a, ok := l.Addr().(*net.TCPAddr)
	switch {
	case !ok || a.IP.IsLoopback():
		return ""
	case a.IP.IsUnspecified():
		return fmt.Sprintf("mcpmock: warning: --allow-remote: listening on every interface (%v); any machine that reaches this one can connect", a)
	}
	return fmt.Sprintf("mcpmock: warning: --allow-remote: listening on %v, not loopback; other machines can connect", a)
}

// URL returns the http URL of path on l, with the address l is bound to.
func URL(l net.Listener, path string) string {
	hostport := l.Addr().String()
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		hostport = net.JoinHostPort(a.IP.String(), fmt.Sprint(a.Port))
	}
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return "http://" + hostport + path
}
