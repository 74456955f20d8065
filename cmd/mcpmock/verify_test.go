package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestVerifyFailuresAlikeAreOneLine: a live server that refuses every
// request alike (a server without the recorded protocol version answers
// each with the same HTTP 400) is said in one line that names the
// interactions, not in one BREAKING line of the same body per request.
func TestVerifyFailuresAlikeAreOneLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Bad Request: unsupported protocol version", http.StatusBadRequest)
	}))
	defer srv.Close()
	var stdout, stderr syncBuffer
	err := run(testContext(t), []string{"cassette", "verify", "-c", "../../examples/weather/testdata/weather.json", "--upstream", srv.URL + "/mcp"},
		strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatal("verify passed against a server that refuses everything")
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "BREAKING: interactions 1, 2, 3 and 4 (server/discover, tools/call): now fail alike: live server: POST ") || !strings.Contains(lines[0], "unsupported protocol version") {
		t.Errorf("verify says:\n%s", &stdout)
	}
}
