package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "app.localhost": true, "127.0.0.1": true, "127.0.0.1:9": true,
		"127.1.2.3": true, "[::1]:80": true, "::1": true, "localhost.": true,
		"example.com": false, "evil.example:80": false, "10.0.0.1": false, "": false, "localhost.evil.com": false,
		"[::]:80": false, "0.0.0.0": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestWrap(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tests := []struct {
		name    string
		opts    *Options
		method  string
		host    string
		headers map[string]string
		status  int
		body    string // a substring of the body
		wantHdr map[string]string
	}{
		{name: "plain loopback", host: "127.0.0.1:1234", status: 200, body: "ok"},
		{name: "localhost", host: "localhost:1234", status: 200},
		{name: "ipv6 loopback", host: "[::1]:1234", status: 200},
		{name: "rebinding host", host: "attacker.example:1234", status: 403, body: `Host "attacker.example:1234"`},
		{name: "remote host allowed", opts: &Options{AllowNonLoopbackHost: true}, host: "mcp.example:80", status: 200},
		{name: "loopback origin", host: "127.0.0.1:1", headers: map[string]string{"Origin": "http://localhost:6274"}, status: 200,
			wantHdr: map[string]string{"Access-Control-Allow-Origin": "http://localhost:6274"}},
		{name: "foreign origin", host: "127.0.0.1:1", headers: map[string]string{"Origin": "https://evil.example"}, status: 403, body: `Origin "https://evil.example"`},
		{name: "null origin", host: "127.0.0.1:1", headers: map[string]string{"Origin": "null"}, status: 403},
		{name: "listed origin", opts: &Options{AllowedOrigins: []string{"https://App.Example/"}}, host: "127.0.0.1:1",
			headers: map[string]string{"Origin": "https://app.example"}, status: 200},
		{name: "any origin", opts: &Options{AllowedOrigins: []string{"*"}}, host: "127.0.0.1:1",
			headers: map[string]string{"Origin": "https://other.example"}, status: 200},
		{name: "origin checked before token", opts: &Options{AuthToken: "s3cret"}, host: "127.0.0.1:1",
			headers: map[string]string{"Origin": "https://evil.example"}, status: 403},
		{name: "no token", opts: &Options{AuthToken: "s3cret"}, host: "127.0.0.1:1", status: 401, body: "Bearer",
			wantHdr: map[string]string{"WWW-Authenticate": `Bearer realm="mcpmock"`}},
		{name: "wrong token", opts: &Options{AuthToken: "s3cret"}, host: "127.0.0.1:1",
			headers: map[string]string{"Authorization": "Bearer nope"}, status: 401},
		{name: "basic auth is not a bearer token", opts: &Options{AuthToken: "s3cret"}, host: "127.0.0.1:1",
			headers: map[string]string{"Authorization": "Basic s3cret"}, status: 401},
		{name: "right token", opts: &Options{AuthToken: "s3cret"}, host: "127.0.0.1:1",
			headers: map[string]string{"Authorization": "bearer s3cret"}, status: 200, body: "ok"},
		{name: "preflight needs no token", opts: &Options{AuthToken: "s3cret"}, method: "OPTIONS", host: "127.0.0.1:1",
			headers: map[string]string{"Origin": "http://127.0.0.1:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, mcp-session-id"},
			status:  204, wantHdr: map[string]string{"Access-Control-Allow-Headers": "authorization, mcp-session-id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "POST"
			}
			req := httptest.NewRequest(method, "http://"+tt.host+"/mcp", strings.NewReader("{}"))
			req.Host = tt.host
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			Wrap(ok, tt.opts).ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d (body %q)", rec.Code, tt.status, rec.Body.String())
			}
			if !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tt.body)
			}
			for k, v := range tt.wantHdr {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestWrapOverLoopback checks the guard behind a real listener, with a real
// client that sends a forged Host as a rebinding attacker's browser would.
func TestWrapOverLoopback(t *testing.T) {
	l, err := Listen(t.Context(), ":0", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), &Options{AuthToken: "tok"})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	u := URL(l, "/mcp")
	for _, tc := range []struct {
		host, auth string
		want       int
	}{
		{"", "Bearer tok", 200},
		{"rebound.example", "Bearer tok", 403},
		{"", "", 401},
	} {
		req, _ := http.NewRequest("GET", u, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q auth %q: status %d, want %d", tc.host, tc.auth, resp.StatusCode, tc.want)
		}
	}
}
