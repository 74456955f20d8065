package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRecordAuthTokenKeepsClientAuthorization runs the HTTP tap of the
// binary with --auth-token before a real upstream that reports the
// Authorization values it saw: the listener's token is stripped, the
// client's own values go through, in whatever order the client sent them.
// (r.Header.Del used to remove every value, and only a first value was
// checked.)
func TestRecordAuthTokenKeepsClientAuthorization(t *testing.T) {
	seen := make(chan []string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Values("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	_, url := startListening(t, "record", "-c", tempCassette(t), "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--auth-token", "listener-token")
	for _, tt := range []struct {
		name   string
		sent   []string
		status int
		want   []string // what the upstream saw
	}{
		{"token, then the client's own", []string{"Bearer listener-token", "Bearer upstream-secret"}, 200, []string{"Bearer upstream-secret"}},
		{"the client's own, then the token", []string{"Bearer upstream-secret", "Bearer listener-token"}, 200, []string{"Bearer upstream-secret"}},
		{"the token twice and two of the client's", []string{"Basic dXNlcjpwdw==", "bearer listener-token", "Bearer other", "Bearer  listener-token"}, 200, []string{"Basic dXNlcjpwdw==", "Bearer other"}},
		{"the token alone", []string{"Bearer listener-token"}, 200, nil},
		{"the client's own alone", []string{"Bearer upstream-secret"}, 401, nil},
		{"a token that differs in one byte", []string{"Bearer listener-tokeN", "Bearer upstream-secret"}, 401, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header["Authorization"] = tt.sent
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status != 200 {
				return
			}
			if diff := cmp.Diff(tt.want, <-seen, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Authorization seen upstream (-want +got):\n%s", diff)
			}
		})
	}
}
