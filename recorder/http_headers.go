package recorder

import (
	"net/http"
	"strings"
)

// Redacted replaces a secret in a cassette.
const Redacted = "[REDACTED]"

// keptHeaders are the headers that matter to MCP over HTTP, recorded with
// each exchange (by canonical name). Secrets among them are redacted.
var keptHeaders = map[string]bool{
	"Content-Type":         true,
	"Mcp-Session-Id":       true,
	"Mcp-Protocol-Version": true,
	"Mcp-Method":           true,
	"Mcp-Name":             true,
	"Last-Event-Id":        true,
	"Retry-After":          true,
	"Www-Authenticate":     true,
	"Allow":                true,
	"Location":             true,
	"Authorization":        true,
	"Proxy-Authorization":  true,
	"Cookie":               true,
	"Set-Cookie":           true,
}

// SecretName reports header and query parameter names whose values are
// secrets, redacted by default: credentials, cookies, the session id, and
// API-key-like names (x-api-key, *-token, *-secret, *api-key*, *apikey*,
// token, secret, password, access_token...).
func SecretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "mcp-session-id",
		"token", "secret", "password", "key", "auth", "sig", "signature":
		return true
	}
	n = strings.ReplaceAll(n, "_", "-")
	return strings.HasSuffix(n, "-token") || strings.HasSuffix(n, "-secret") || strings.HasSuffix(n, "-key") ||
		strings.Contains(n, "api-key") || strings.Contains(n, "apikey") || strings.Contains(n, "password")
}

// recordedHeaders returns the headers of h that matter (keptHeaders,
// Mcp-Param-*, and any secret-looking one, whose presence matters even
// though its value is not kept), secrets redacted; nil when none.
func recordedHeaders(h http.Header) map[string]string {
	var m map[string]string
	for name, vals := range h {
		if len(vals) == 0 {
			continue
		}
		canon := http.CanonicalHeaderKey(name)
		secret := SecretName(canon)
		if !keptHeaders[canon] && !strings.HasPrefix(canon, "Mcp-Param-") && !secret {
			continue
		}
		v := strings.Join(vals, ", ")
		if secret {
			v = Redacted
		}
		if m == nil {
			m = map[string]string{}
		}
		m[canon] = v
	}
	return m
}

// hopHeaders are the hop-by-hop headers, which a proxy does not forward
// (RFC 9110, section 7.6.1), as httputil.ReverseProxy drops them.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// copyHeaders copies src to dst without the hop-by-hop headers (also those
// that src's Connection header names).
func copyHeaders(dst, src http.Header) {
	drop := map[string]bool{}
	for _, h := range hopHeaders {
		drop[h] = true
	}
	for _, v := range src["Connection"] {
		for _, f := range strings.Split(v, ",") {
			drop[http.CanonicalHeaderKey(strings.TrimSpace(f))] = true
		}
	}
	for k, vv := range src {
		if drop[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vv {
			dst.Add(k, v)
		}
	}
}
