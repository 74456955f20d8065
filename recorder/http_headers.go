package recorder

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// keptHeaders are the headers that matter to MCP over HTTP, recorded with
// each exchange (by canonical name). Secrets among them are redacted.
var keptHeaders = map[string]bool{
	"Content-Type":            true,
	mcp.HeaderSessionID:       true,
	mcp.HeaderProtocolVersion: true,
	mcp.HeaderMethod:          true,
	mcp.HeaderName:            true,
	http.CanonicalHeaderKey(mcp.HeaderLastEventID): true,
	"Retry-After":         true,
	"Www-Authenticate":    true,
	"Allow":               true,
	"Location":            true,
	"Authorization":       true,
	"Proxy-Authorization": true,
	"Cookie":              true,
	"Set-Cookie":          true,
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
		secret := cassettes.SecretName(canon)
		if !keptHeaders[canon] && !strings.HasPrefix(canon, mcp.HeaderParamPrefix) && !secret {
			continue
		}
		v := strings.Join(vals, ", ")
		if secret {
			v = cassettes.Redacted
		}
		if m == nil {
			m = map[string]string{}
		}
		m[canon] = v
	}
	return m
}

// hopHeader reports the hop-by-hop headers, which a proxy does not forward
// (RFC 9110, section 7.6.1), as httputil.ReverseProxy drops them.
func hopHeader(canon string) bool {
	switch canon {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// copyHeaders adds src to dst without the hop-by-hop headers (also those
// that src's Connection header names). The values are shared, not copied:
// neither side changes a slice in place (Add appends beyond the other's
// length; Set and Del replace).
func copyHeaders(dst, src http.Header) {
	conn := src["Connection"]
	for k, vv := range src {
		canon := http.CanonicalHeaderKey(k)
		if hopHeader(canon) || (len(conn) > 0 && namedIn(conn, canon)) {
			continue
		}
		if old := dst[k]; len(old) > 0 {
			dst[k] = append(old[:len(old):len(old)], vv...)
		} else {
			dst[k] = vv[:len(vv):len(vv)]
		}
	}
}

// namedIn reports whether a Connection header names canon.
func namedIn(conn []string, canon string) bool {
	for _, v := range conn {
		for f := range strings.SplitSeq(v, ",") {
			if http.CanonicalHeaderKey(strings.TrimSpace(f)) == canon {
				return true
			}
		}
	}
	return false
}

// recordedURL is the path and query of a request as the cassette keeps
// them: the query as it came, in its order, but with the value of each
// secret-looking parameter (cassettes.SecretName: api_key, token, sig, sessionId...)
// replaced by [REDACTED].
func recordedURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	path := u.EscapedPath()
	if u.RawQuery == "" {
		if u.ForceQuery {
			return path + "?"
		}
		return path
	}
	var b strings.Builder
	b.Grow(len(path) + 1 + len(u.RawQuery))
	b.WriteString(path)
	b.WriteByte('?')
	for i, param := range strings.Split(u.RawQuery, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		raw, _, hasValue := strings.Cut(param, "=")
		name := raw
		if plain, err := url.QueryUnescape(raw); err == nil {
			name = plain
		}
		if hasValue && cassettes.SecretName(name) {
			b.WriteString(raw + "=" + cassettes.Redacted)
			continue
		}
		b.WriteString(param)
	}
	return b.String()
}
