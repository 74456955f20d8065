package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestVerifyIsTheDiff: cassette verify of a recording against the server it
// was recorded from, changed since (get_weather gained a required argument),
// says what cassette diff says between that recording and one made of the
// changed server: the same lines, by the same code, and fails.
func TestVerifyIsTheDiff(t *testing.T) {
	dir := buildDiffPeer(t)
	for _, tc := range []struct {
		variant string
		status  int
	}{{"required", 1}, {"description", 0}, {"base", 0}} {
		t.Run(tc.variant, func(t *testing.T) {
			p := startWith(t, withPath(dir), "cassette", "verify", "-c", filepath.Join("testdata", "diff", "base.json"), "--", "diffpeer", tc.variant)
			out, _ := readAll(p)
			if s := p.wait(t); s != tc.status {
				t.Fatalf("verify against %s exited %d, want %d:\n%s%s", tc.variant, s, tc.status, out, p.stderr)
			}
			// The changes, then (when it passes) a last line that counts
			// them; a failing verify says its count on stderr.
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := ""
			if tc.status == 0 {
				last, lines = lines[len(lines)-1], lines[:len(lines)-1]
			}
			want := []string{}
			if tc.variant != "base" {
				golden, err := os.ReadFile(filepath.Join("testdata", "diff", tc.variant+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				want = strings.Split(strings.TrimSpace(string(golden)), "\n")
				want = want[:len(want)-1] // the count of cassette diff
			}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("verify against %s says other than cassette diff (-diff +verify):\n%s", tc.variant, diff)
			}
			if tc.variant == "base" && last != "testdata/diff/base.json: no drift" {
				t.Errorf("verify of an unchanged server ends with %q", last)
			}
			if tc.variant == "description" && last != "testdata/diff/base.json: 2 differences, none breaking" {
				t.Errorf("verify of a changed description ends with %q", last)
			}
		})
	}
}
