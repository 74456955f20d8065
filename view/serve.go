package view

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The page: one HTML file, its script and its style, embedded.
//
//go:embed assets/index.html assets/app.js assets/app.css
var assets embed.FS

// Cassettes is what a Handler or WriteHTML shows: the models of cassettes,
// in the order given.
type Cassettes []*Document

// Entry is one cassette in the list of GET /api/cassettes.
type Entry struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	Messages int    `json:"messages"`
	Sessions int    `json:"sessions"`
	// Live is true for the traffic of a tap or a replay as it passes
	// (GET /api/events says when more came).
	Live bool `json:"live,omitempty"`
}

// Handler serves the page and its JSON API:
//
//	GET /                    the page
//	GET /app.js, /app.css    its script and style
//	GET /api/cassettes       the list of cassettes ([]Entry)
//	GET /api/cassettes/N     the model of cassette N (a Document)
//
// Everything else is 404, every method but GET and HEAD 405. It adds no
// listener rules of its own: the command serves it behind the same
// loopback, Host and Origin checks as its other listeners.
func Handler(docs Cassettes) http.Handler {
	return serve(func() (Cassettes, int) { return docs, 0 }, nil)
}

// serve serves the page and the JSON API of the cassettes that docs
// returns (the first live of them live), and /api/events with events when
// it is not nil.
func serve(docs func() (Cassettes, int), events http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { page(w) })
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) { asset(w, "app.js", "text/javascript; charset=utf-8") })
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) { asset(w, "app.css", "text/css; charset=utf-8") })
	mux.HandleFunc("GET /api/cassettes", func(w http.ResponseWriter, r *http.Request) {
		d, live := docs()
		e := d.entries()
		for i := range live {
			e[i].Live = true
		}
		writeJSON(w, e)
	})
	mux.HandleFunc("GET /api/cassettes/{n}", func(w http.ResponseWriter, r *http.Request) {
		d, _ := docs()
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 0 || n >= len(d) {
			http.Error(w, fmt.Sprintf("no cassette %q: there are %d (0 to %d)", r.PathValue("n"), len(d), len(d)-1), http.StatusNotFound)
			return
		}
		writeJSON(w, d[n])
	})
	if events != nil {
		mux.HandleFunc("GET /api/events", events)
	}
	return secure(mux)
}

// secure sets the headers that keep the page to itself: no script, style
// or image from anywhere but the page and data: URLs (images and audio of
// content blocks), no framing, no sniffing.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// csp is the page's content security policy: its own script and style
// (inline in a written file, where the policy is a meta element), images and
// audio from data: URLs only, no connection but to itself.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; media-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (docs Cassettes) entries() []Entry {
	out := make([]Entry, len(docs))
	for i, d := range docs {
		out[i] = Entry{Index: i, Name: d.Name, Messages: len(d.Messages), Sessions: len(d.Sessions)}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

func asset(w http.ResponseWriter, name, ctype string) {
	b, _ := assets.ReadFile("assets/" + name)
	w.Header().Set("Content-Type", ctype)
	w.Write(b)
}

// page writes the page, which reads the cassettes from the JSON API.
func page(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	b, _ := assets.ReadFile("assets/index.html")
	w.Write(b)
}

// WriteHTML writes the page with the cassettes in it as one self-contained
// HTML file: its script and style inline, the models as JSON in a script
// element of type application/json (with <, > and & escaped, so that no
// value can end the element), and a content security policy that lets
// nothing load from the network. It works from file:// and as a CI
// artifact.
func WriteHTML(w io.Writer, docs Cassettes) error {
	html, _ := assets.ReadFile("assets/index.html")
	js, _ := assets.ReadFile("assets/app.js")
	css, _ := assets.ReadFile("assets/app.css")
	var data bytes.Buffer
	enc := json.NewEncoder(&data) // escapes <, > and & as \u003c...
	if err := enc.Encode(docs); err != nil {
		return err
	}
	inlineCSP := strings.NewReplacer("script-src 'self'", "script-src 'unsafe-inline'", "style-src 'self'", "style-src 'unsafe-inline'", "connect-src 'self'", "connect-src 'none'", "; frame-ancestors 'none'", "").Replace(csp)
	s := string(html)
	s = strings.Replace(s, `<link rel="stylesheet" href="app.css">`, "<style>\n"+string(css)+"</style>", 1)
	s = strings.Replace(s, `<script src="app.js"></script>`,
		`<script type="application/json" id="mcpmock-data">`+strings.TrimSpace(data.String())+"</script>\n<script>\n"+
			strings.ReplaceAll(string(js), "</script", `<\/script`)+"</script>", 1)
	s = strings.Replace(s, "<head>", `<head>
<meta http-equiv="Content-Security-Policy" content="`+inlineCSP+`">`, 1)
	_, err := io.WriteString(w, s)
	return err
}
