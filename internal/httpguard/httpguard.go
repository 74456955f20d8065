// Package httpguard is the safety of mcpmock's HTTP listeners, shared by the
// tap and the replay server: bind to loopback unless told otherwise
// (listen.go), refuse requests whose Host or Origin betray a DNS rebinding
// attack (403), and require a bearer token when one is configured (401);
// and the listener limits (limits.go): body and header size, read and idle
// timeouts, the bytes of all bodies in flight (body.go), the number of
// sessions and their idle expiry (sessions.go), a request rate per client.
//
//	l, _ := httpguard.Listen(ctx, ":0", nil) // 127.0.0.1, a free port
//	srv := httpguard.Server(mux, &httpguard.Options{AuthToken: token}, nil)
//	fmt.Fprintln(os.Stderr, httpguard.URLLine(l, "/mcp"))
//	srv.Serve(l)
package httpguard

import (
	"crypto/subtle"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// Options configure Wrap. The zero value (or nil) accepts loopback Hosts,
// requests without an Origin or with a loopback one, and needs no token.
type Options struct {
	// AllowedOrigins are origins accepted besides loopback ones, compared
	// case-insensitively as scheme://host[:port] (a trailing slash is
	// ignored). "*" accepts any origin. Empty means loopback origins only.
	AllowedOrigins []string
	// AuthToken, when set, must come with every request as one of its
	// "Authorization: Bearer <token>" values; a request without it is
	// answered 401 with WWW-Authenticate. Such values are removed from the
	// request before it is handled; the request's other Authorization
	// values (the client's own, for an upstream) stay. Empty means no
	// token is needed.
	AuthToken string
	// AllowNonLoopbackHost accepts any Host header (for a listener bound to
	// a non-loopback address on purpose). False accepts loopback Hosts only.
	AllowNonLoopbackHost bool

	// The listener limits. Each zero value means the default named after it;
	// a negative value means no limit.

	// MaxBodyBytes bounds a POST body (413 beyond it); 0 means
	// DefaultMaxBodyBytes (64 MiB).
	MaxBodyBytes int64
	// ReadTimeout bounds the time to read a POST body once its headers are
	// in (408 beyond it); 0 means DefaultReadTimeout (30 s). It does not
	// bound the answer: event streams last as long as they need.
	ReadTimeout time.Duration
	// MaxSessions bounds the open sessions: Streamable HTTP sessions (from
	// the Mcp-Session-Id of an answer to the end of the session by DELETE
	// or 404) and HTTP+SSE streams. A request that would open one more is
	// answered 503 with a JSON-RPC error. 0 means DefaultMaxSessions (1000).
	MaxSessions int
	// SessionIdle is how long a session may go without a request (none in
	// flight, no GET stream open) before the guard ends it: its next
	// request is answered 404 with a JSON-RPC error, so that the client
	// initializes again, and EndSession is called. 0 means
	// DefaultSessionIdle (30 min); negative, never.
	SessionIdle time.Duration
	// EndSession, when set, is called with the id of a session that the
	// guard ended for idleness, so that the handler frees it (EndByDelete
	// sends it a DELETE). Nil: the handler is not told.
	EndSession func(id string)
	// MaxInFlightBytes bounds the bytes of all request bodies held at once,
	// from the first byte read to the end of the request. A body that
	// does not fit in what is left is answered 503 with Retry-After (and
	// not read); one larger than the whole budget, 413. 0 means
	// DefaultMaxInFlightBytes (256 MiB).
	MaxInFlightBytes int64
	// RateLimit bounds the requests of one client (one IP address) with a
	// token bucket of RateLimit.N tokens refilled over RateLimit.Per; a
	// request beyond it is answered 429 with Retry-After. Zero: no limit.
	RateLimit rate.Rate
	// Now is the clock of the rate limit and of session expiry; nil means
	// time.Now.
	Now func() time.Time

	// MaxHeaderBytes, ReadHeaderTimeout and IdleTimeout are the server's,
	// applied by Server (Wrap cannot): 0 means DefaultMaxHeaderBytes
	// (64 KiB; 431 beyond it), DefaultReadHeaderTimeout (10 s) and
	// DefaultIdleTimeout (2 min, a keep-alive connection between requests).
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
}

// Wrap returns h behind the checks of opts, in this order: Host (403),
// Origin (403), the bearer token (401). A cross-origin preflight (OPTIONS
// with Access-Control-Request-Method) from an accepted origin is answered
// 204 without a token, as browsers send none; responses to an accepted
// cross-origin request carry the CORS headers that let a browser client read
// them (Mcp-Session-Id included).
//
// Then come the limits: the rate (429), the token (401), the body's size
// (413), read time (408) and the in-flight budget (503 with Retry-After),
// an expired session (404), the number of sessions (503).
func Wrap(h http.Handler, opts *Options) http.Handler {
	g := &guard{next: h}
	if opts != nil {
		g.opts = *opts
		g.opts.AllowedOrigins = nil
		for _, o := range opts.AllowedOrigins {
			g.opts.AllowedOrigins = append(g.opts.AllowedOrigins, normalizeOrigin(o))
		}
	}
	g.lim = newLimits(&g.opts)
	return g
}

type guard struct {
	next http.Handler
	opts Options
	lim  *limits
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.opts.AllowNonLoopbackHost && !IsLoopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback name; mcpmock refuses it to prevent DNS rebinding (serve with --allow-remote to accept other hosts)", r.Host), http.StatusForbidden)
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !g.originAllowed(origin) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed; mcpmock accepts loopback origins and those given with --allow-origin", origin), http.StatusForbidden)
			return
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		hd.Set("Access-Control-Expose-Headers", mcp.HeaderSessionID+", "+mcp.HeaderProtocolVersion+", WWW-Authenticate, Retry-After")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				hd.Set("Access-Control-Allow-Headers", req)
			}
			hd.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if !g.lim.rateOK(w, r) {
		return
	}
	if g.opts.AuthToken != "" && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpmock"`)
		http.Error(w, "Unauthorized: this mcpmock listener requires \"Authorization: Bearer <token>\" (the --auth-token it was started with)", http.StatusUnauthorized)
		return
	}
	g.lim.serve(w, r, g.next)
}

func (g *guard) originAllowed(origin string) bool {
	if u, err := url.Parse(origin); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") && IsLoopbackHost(u.Host) {
		return true
	}
	o := normalizeOrigin(origin)
	for _, a := range g.opts.AllowedOrigins {
		if a == "*" || a == o {
			return true
		}
	}
	return false
}

func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// authorized reports whether one of the request's Authorization values is
// "Bearer <AuthToken>" (compared in constant time), and removes every such
// value, so that the listener's token goes no further (upstream, into a
// cassette) while the client's own Authorization values do.
func (g *guard) authorized(r *http.Request) bool {
	values := r.Header.Values("Authorization")
	rest := make([]string, 0, len(values))
	for _, v := range values {
		if !g.isToken(v) {
			rest = append(rest, v)
		}
	}
	switch {
	case len(rest) == len(values):
		return false
	case len(rest) == 0:
		r.Header.Del("Authorization")
	default:
		r.Header["Authorization"] = rest
	}
	return true
}

// isToken reports whether the Authorization value v is "Bearer
// <AuthToken>", comparing the token in constant time.
func (g *guard) isToken(v string) bool {
	scheme, token, ok := strings.Cut(v, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(g.opts.AuthToken)) == 1
}
