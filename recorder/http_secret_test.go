package recorder

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestTapHidesUpstreamSecrets: the upstream URL's password and the values
// of its secret-named query parameters (a key the tap adds for the
// server, which the client does not have) are not in the error the client
// gets when the upstream does not answer, nor in the tap's warnings; the
// error still says what failed.
func TestTapHidesUpstreamSecrets(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	var log logBuffer
	base, _ := startTapWith(t, "http://user:pa55word@"+addr+"/mcp?api_key=k3y-value&client_secret=s3cr3t-value&region=eu",
		&HTTPOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, shown := range []string{string(body), log.String()} {
		for _, secret := range []string{"pa55word", "k3y-value", "s3cr3t-value"} {
			if strings.Contains(shown, secret) {
				t.Errorf("%q is shown: %s", secret, shown)
			}
		}
	}
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "did not answer") || !strings.Contains(string(body), "region=eu") {
		t.Errorf("answer %d %s, want 502 saying that the upstream did not answer", resp.StatusCode, body)
	}
}
