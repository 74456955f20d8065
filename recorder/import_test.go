package recorder

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// harProxy is a proxy that writes a HAR 1.2 log of what passes, as a
// browser's developer tools or mitmproxy's har_dump do: an entry for each
// exchange once its response has ended, the whole body of an event stream
// in one content.text, base64 when b64 is set.
type harProxy struct {
	upstream string
	b64      bool
	wg       sync.WaitGroup // the exchanges in flight
	mu       sync.Mutex     // guards entries
	entries  []map[string]any
}

func harHeaderList(h http.Header) []map[string]string {
	var out []map[string]string
	for name, vals := range h {
		for _, v := range vals {
			out = append(out, map[string]string{"name": name, "value": v})
		}
	}
	return out
}

func (p *harProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	start := time.Now()
	body, _ := io.ReadAll(r.Body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	headers := time.Now()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.(http.Flusher).Flush()
	var got bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if n > 0 {
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			break
		}
	}
	end := time.Now()
	content := map[string]any{"size": got.Len(), "mimeType": resp.Header.Get("Content-Type"), "text": got.String()}
	if p.b64 {
		content["text"], content["encoding"] = base64.StdEncoding.EncodeToString(got.Bytes()), "base64"
	}
	req := map[string]any{"method": r.Method, "url": "http://" + r.Host + r.URL.RequestURI(), "httpVersion": "HTTP/1.1",
		"headers": harHeaderList(r.Header), "queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": len(body)}
	if len(body) > 0 {
		req["postData"] = map[string]any{"mimeType": r.Header.Get("Content-Type"), "text": string(body)}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	entry := map[string]any{
		"startedDateTime": start.UTC().Format(time.RFC3339Nano), "time": ms(end.Sub(start)),
		"request": req,
		"response": map[string]any{"status": resp.StatusCode, "statusText": http.StatusText(resp.StatusCode), "httpVersion": "HTTP/1.1",
			"headers": harHeaderList(resp.Header), "cookies": []any{}, "content": content, "redirectURL": "", "headersSize": -1, "bodySize": got.Len()},
		"cache":   map[string]any{},
		"timings": map[string]any{"send": 0, "wait": ms(headers.Sub(start)), "receive": ms(end.Sub(headers))},
	}
	p.mu.Lock()
	p.entries = append(p.entries, entry)
	p.mu.Unlock()
}

func (p *harProxy) har(t *testing.T) []byte {
	t.Helper()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	data, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2",
		"creator": map[string]any{"name": "harProxy", "version": "1"}, "entries": p.entries}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestImportHARIsWhatTheTapRecords runs real clients against real servers
// over Streamable HTTP (stateful with SSE or JSON answers, stateless) and
// HTTP+SSE, through the HTTP tap and, behind it, a proxy writing a HAR; the
// HAR imported is the cassette the tap recorded, interaction for
// interaction, HTTP details included.
func TestImportHARIsWhatTheTapRecords(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		server   testpeer.HTTPServerOptions
		client   func(ctx context.Context, url string, opts testpeer.HTTPOptions) (testpeer.Transcript, error)
		protocol string
		sse, b64 bool
	}{
		{"gosdk-sse/gosdk/2025-11-25", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunGoSDKHTTP, "2025-11-25", false, false},
		{"gosdk-json/mcpgo/2025-11-25/base64", testpeer.GoSDK, testpeer.HTTPServerOptions{JSONResponse: true}, testpeer.RunMCPGoHTTP, "2025-11-25", false, true},
		{"gosdk-stateless/gosdk/2026-07-28", testpeer.GoSDK, testpeer.HTTPServerOptions{Stateless: true}, testpeer.RunGoSDKHTTP, "", false, false},
		{"mcpgo/mcpgo/2025-06-18", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunMCPGoHTTP, "2025-06-18", false, false},
		{"gosdk-httpsse/gosdk/2024-11-05", testpeer.GoSDK, testpeer.HTTPServerOptions{}, testpeer.RunGoSDKHTTP, "2024-11-05", true, false},
		{"mcpgo-httpsse/mcpgo/2024-11-05", testpeer.MCPGo, testpeer.HTTPServerOptions{}, testpeer.RunMCPGoHTTP, "2024-11-05", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := testpeer.HTTPHandler(tt.kind, tt.server)
			if err != nil {
				t.Fatal(err)
			}
			recorded, imported := tapAndHAR(t, h, tt.b64, func(base string) error {
				url := base + "/mcp"
				if tt.sse {
					url = base + "/sse"
				}
				_, err := tt.client(t.Context(), url, testpeer.HTTPOptions{SSE: tt.sse, ClientOptions: testpeer.ClientOptions{ProtocolVersion: tt.protocol}})
				return err
			})
			sameInteractions(t, recorded, imported)
			if wantT := map[bool]string{false: "streamable-http", true: "sse"}[tt.sse]; imported.Meta.Transport != wantT {
				t.Errorf("meta.transport = %q, want %q", imported.Meta.Transport, wantT)
			}
		})
	}
}

// tapAndHAR serves the upstream handler behind a HAR-writing proxy and the
// HTTP tap in front of it, runs the client on the tap's base URL, and
// returns the tap's cassette and the HAR imported.
func tapAndHAR(t *testing.T, upstream http.Handler, b64 bool, client func(base string) error) (recorded, imported *cassettes.Cassette) {
	t.Helper()
	up := httptest.NewServer(upstream)
	defer up.Close()
	proxy := &harProxy{upstream: up.URL, b64: b64}
	ps := httptest.NewServer(proxy)
	defer ps.Close()
	path := filepath.Join(t.TempDir(), "tap.json")
	rec, err := New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tap, err := NewHTTP(ps.URL+"/mcp", rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(tap)
	if err := client(ts.URL); err != nil {
		t.Fatal(err)
	}
	ts.CloseClientConnections()
	ts.Close()
	tap.CloseStreams()
	ps.CloseClientConnections()
	har := proxy.har(t)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if recorded, err = cassettes.Load(path); err != nil {
		t.Fatal(err)
	}
	cp, err := cassettes.ImportHAR("session.har", har)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Warnings) > 0 {
		t.Errorf("warnings: %q", cp.Warnings)
	}
	if imported, err = Import(cp, nil); err != nil {
		t.Fatal(err)
	}
	if len(recorded.Interactions) < 5 {
		t.Fatalf("the tap recorded %d interactions, want the whole script", len(recorded.Interactions))
	}
	return recorded, imported
}

// sameInteractions fails the test when the cassettes' interactions differ.
func sameInteractions(t *testing.T, recorded, imported *cassettes.Cassette) {
	t.Helper()
	want, got := interactionsJSON(t, recorded), interactionsJSON(t, imported)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imported HAR differs from the tap's cassette (-tap +imported):\n%s", diff)
	}
}

// interactionsJSON is the cassette's interactions as indented JSON, one
// line a member, for a readable diff.
func interactionsJSON(t *testing.T, c *cassettes.Cassette) []string {
	t.Helper()
	data, err := cassettes.Encode(&cassettes.Cassette{Version: 1, Interactions: c.Interactions})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// TestImportHAREverything is TestImportHARIsWhatTheTapRecords with the
// server-everything look-alikes: progress, logs, server-to-client requests
// on the POST streams, and messages on the GET stream. A HAR has no time for
// each event of a stream, so the places of the GET stream's messages among
// the POSTs are inferred (ImportHAR): the same interactions, and with the
// go-sdk server the same order; with mcp-go's, a resources/updated that a
// tool call caused comes before that call.
func TestImportHAREverything(t *testing.T) {
	for _, kind := range testpeer.EverythingKinds {
		exact := kind == testpeer.GoSDKEverything
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv, err := testpeer.NewEverythingHTTP(kind)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			recorded, imported := tapAndHAR(t, srv, false, func(base string) error {
				_, err := testpeer.RunEverythingHTTP(t.Context(), base+"/mcp", testpeer.EverythingOptions{})
				return err
			})
			if !exact {
				sortInteractions(recorded)
				sortInteractions(imported)
			}
			sameInteractions(t, recorded, imported)
		})
	}
}

// sortInteractions puts the interactions, and the messages of each
// exchange, in the order of their JSON text, and forgets their places
// (BeforeResponse, AfterExchange): the mcp-go server sends a call's
// progress on two streams at once, in an order that changes from run to
// run.
func sortInteractions(c *cassettes.Cassette) {
	for i := range c.Interactions {
		in := &c.Interactions[i]
		in.BeforeResponse, in.AfterExchange = false, 0
		slices.SortFunc(in.Exchange, func(a, b cassettes.Message) int { return bytes.Compare(a.Message, b.Message) })
	}
	slices.SortFunc(c.Interactions, func(a, b cassettes.Interaction) int {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return bytes.Compare(ja, jb)
	})
}

// FuzzImportCapture feeds what each importer makes of any input to Import:
// no panic, and the cassette saves and loads again. (An Import takes the
// Recorder's batchDelay at least: some 100 executions a second.)
func FuzzImportCapture(f *testing.F) {
	seeds := map[string]string{"har": "mitmproxy-echo-stateless-2026-07-28.har", "lines": "weather-stdio-2025-11-25.lines", "mcpsnoop": "mcpsnoop-weather-stdio-2025-11-25.jsonl"}
	for _, format := range cassettes.ImportFormats() {
		data, err := os.ReadFile(filepath.Join("..", "cassettes", "testdata", "import", seeds[format]))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(format, data)
	}
	f.Fuzz(func(t *testing.T, format string, data []byte) {
		imp := cassettes.ImporterFor(format)
		if imp == nil {
			return
		}
		cp, err := imp("fuzz", data)
		if err != nil {
			return
		}
		c, err := Import(cp, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cassettes.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cassettes.Parse("imported.json", out); err != nil {
			t.Fatalf("an imported cassette does not load: %v\n%s", err, out)
		}
	})
}
