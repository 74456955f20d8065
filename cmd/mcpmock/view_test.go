package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const weatherCassette = "../../examples/weather/testdata/weather.json"

// TestViewHTML: mcpmock view --html writes one file that holds every
// message's method, tool and arguments and every error's text; a cassette
// that does not load is an error (1), no cassette a usage error (2).
func TestViewHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "page.html")
	var stdout, stderr syncBuffer
	if err := run(testContext(t), []string{"view", "--html", page, weatherCassette}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, &stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weather.json", "tools/call", "get_weather", "Atlantis", "API rate limit exceeded"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).Match(b) {
		t.Error("the page loads something from the network")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"view", "--html", page, "missing.json"}, 1},
		{[]string{"view", "--html", page}, 2},
	} {
		var stderr syncBuffer
		err := run(testContext(t), tc.args, strings.NewReader(""), &stdout, &stderr)
		if got := exitCode(err, io.Discard); got != tc.code {
			t.Errorf("%v: exit %d, want %d (%v)", tc.args, got, tc.code, err)
		}
	}
}

// TestViewServes: mcpmock view serves the page and its JSON API on
// loopback, with the Host and Origin checks of every listener, until
// SIGTERM.
func TestViewServes(t *testing.T) {
	p := start(t, "view", weatherCassette)
	var url string
	deadline := time.After(20 * time.Second)
	line := regexp.MustCompile(`mcpmock: listening on (http://127\.0\.0\.1:\d+/) \(the view of 1 cassettes\)`)
	for url == "" {
		s, changed := p.stderr.next()
		if m := line.FindStringSubmatch(s); m != nil {
			url = m[1]
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no listening line:\n%s", s)
		}
	}
	resp, err := http.Get(url + "api/cassettes")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Name     string
		Messages int
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 1 || list[0].Name != "weather.json" || list[0].Messages == 0 {
		t.Errorf("api/cassettes: %+v", list)
	}
	for _, h := range []struct{ name, value string }{{"Host", "evil.example"}, {"Origin", "http://evil.example"}} {
		req, _ := http.NewRequest("GET", url+"api/cassettes/0", nil)
		if h.name == "Host" {
			req.Host = h.value
		} else {
			req.Header.Set(h.name, h.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s: %s, want 403", h.name, h.value, resp.Status)
		}
	}
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after SIGINT", code)
	}
}
