package view

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHandlerAPI: the page, its assets and the JSON API the page reads,
// with the headers that keep the page to itself.
func TestHandlerAPI(t *testing.T) {
	docs := Cassettes{load(t, "weather.json"), load(t, "hostile.json")}
	srv := httptest.NewServer(Handler(docs))
	defer srv.Close()
	get := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/api/cassettes", 200, "application/json"},
		{"GET", "/api/cassettes/1", 200, "application/json"},
		{"GET", "/api/cassettes/2", 404, ""},
		{"GET", "/api/cassettes/x", 404, ""},
		{"GET", "/nope", 404, ""},
		{"POST", "/api/cassettes", 405, ""},
	} {
		resp, _ := get(tc.method, tc.path)
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %s, want %d", tc.method, tc.path, resp.Status, tc.status)
		}
		if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, resp.Header.Get("Content-Type"), tc.ctype)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s %s: Content-Security-Policy %q", tc.method, tc.path, csp)
		}
	}
	_, body := get("GET", "/api/cassettes")
	var list []Entry
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "weather.json" || list[0].Messages != len(docs[0].Messages) {
		t.Errorf("list: %+v", list)
	}
	_, body = get("GET", "/api/cassettes/0")
	var doc Document
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Messages) != len(docs[0].Messages) || doc.Messages[0].Method != docs[0].Messages[0].Method {
		t.Errorf("cassette 0: %d messages, want %d", len(doc.Messages), len(docs[0].Messages))
	}
}

// TestWriteHTMLIsSelfContained: the written page holds its script, style
// and data, loads nothing from anywhere, and no value of a hostile cassette
// can end the data's script element or start markup of its own.
func TestWriteHTMLIsSelfContained(t *testing.T) {
	docs := Cassettes{load(t, "weather.json"), load(t, "hostile.json")}
	var b bytes.Buffer
	if err := WriteHTML(&b, docs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2 (the data and the script)", n)
	}
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).MatchString(page) {
		t.Error("the page loads something from the network")
	}
	for _, s := range []string{`<script src=`, `<link rel="stylesheet"`} {
		if strings.Contains(page, s) {
			t.Errorf("the page still refers to a file of its own: %s", s)
		}
	}
	if !strings.Contains(page, `http-equiv="Content-Security-Policy"`) || !strings.Contains(page, "connect-src 'none'") {
		t.Error("the page has no content security policy that forbids connections")
	}
	for _, hostile := range []string{"<script>window.pwned", "<img src=x", "<b onmouseover", "<iframe"} {
		if strings.Contains(page, hostile) {
			t.Errorf("the page holds %q as markup", hostile)
		}
	}
	start := strings.Index(page, `<script type="application/json" id="mcpmock-data">`)
	end := strings.Index(page[start:], "</script>")
	if start < 0 || end < 0 {
		t.Fatal("no data element")
	}
	var got Cassettes
	data := page[start+len(`<script type="application/json" id="mcpmock-data">`) : start+end]
	if err := json.Unmarshal([]byte(data), &got); err != nil {
		t.Fatalf("the embedded data: %v", err)
	}
	if len(got) != 2 || got[1].Messages[0].Tool != "<img src=x onerror=alert(1)>" {
		t.Errorf("the embedded data does not hold the cassettes as they are: %+v", got[1].Messages[0])
	}
}

// TestHTMLGolden: the page that mcpmock view --html writes, for the
// weather session with the report of a replay, every kind of message and
// the hostile cassette, against its golden file (go test ./view -update).
func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, Cassettes{annotated(t), load(t, "kinds.json"), load(t, "hostile.json")}); err != nil {
		t.Fatal(err)
	}
	golden(t, "page.html", b.Bytes())
}

// TestReadReport: a report that is no report of a replay is an error that
// names it; a cassette it does not name is not annotated.
func TestReadReport(t *testing.T) {
	for _, bad := range []string{`{"version": 1`, `{"version": 1, "cassettes": []}`, `[1, 2]`} {
		if _, err := ReadReport("r.json", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "report r.json") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	rep, err := ReadReport("r.json", strings.NewReader(`{"version": 1, "cassettes": [{"name": "a", "path": "dir/a.json", "misses": [], "unusedInteractions": []}, {"name": "b", "path": "other/a.json"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := load(t, "weather.json")
	if rep.Annotate(d, "weather.json") || d.Replay != nil {
		t.Error("a cassette the report does not name was annotated")
	}
	if rep.Annotate(d, "elsewhere/a.json") {
		t.Error("two cassettes of the report have that file name: neither should be taken")
	}
	if !rep.Annotate(d, "dir/a.json") || d.Replay == nil || d.Replay.Report != "r.json" {
		t.Errorf("the cassette at dir/a.json: %+v", d.Replay)
	}
}
