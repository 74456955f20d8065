//go:build browser

// The browser tests of the view: the page in a real headless Chromium
// (Debian's chromium, driven with chromedp). They need the browser, so they
// are behind the "browser" build tag; .ci/run installs Chromium and runs
//
//	go test -tags browser -run Browser ./view
//
// Each test saves screenshots of the pages it opens, to look at: in
// $MCPMOCK_SCREENSHOTS when it is set, else in a temporary directory that
// the test log names.
package view

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/examples/weather"
)

// browser starts a headless Chromium for the test.
func browser(t testing.TB) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if found, err := exec.LookPath(p); err == nil {
				path = found
				break
			}
		}
	}
	if path == "" {
		t.Fatal("no Chromium on PATH (apt-get install chromium, or set CHROMIUM)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	// A dialog (alert) means a cassette's value ran as script.
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			t.Errorf("the page opened a dialog: %q: a cassette value ran as script", ev.Message)
			chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx
}

var (
	shotsOnce sync.Once
	shotsDir  string
)

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shotsOnce.Do(func() {
		shotsDir = os.Getenv("MCPMOCK_SCREENSHOTS")
		if shotsDir == "" {
			shotsDir, _ = os.MkdirTemp("", "mcpmock-view-screenshots-")
		}
		os.MkdirAll(shotsDir, 0o755)
	})
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Error(err)
		return
	}
	path := filepath.Join(shotsDir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// ready waits until the page has drawn its data.
var ready = chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`))

func count(ctx context.Context, t *testing.T, selector string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, selector)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBrowserPage: the page of the weather session draws one arrow per
// message, marks the tool error, shows a clicked message whole, filters;
// the hostile cassette's values stay text.
func TestBrowserPage(t *testing.T) {
	weather, hostile := load(t, "weather.json"), load(t, "hostile.json")
	srv := httptest.NewServer(Handler(Cassettes{weather, hostile}))
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "weather")
	if n := count(ctx, t, "#diagrams .row"); n != len(weather.Messages) {
		t.Errorf("%d arrows, want one per message: %d", n, len(weather.Messages))
	}
	if n := count(ctx, t, "#diagrams .row.tool-error"); n != 1 {
		t.Errorf("%d arrows marked as a tool error, want 1", n)
	}
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#diagrams .row.tool-error`)),
		chromedp.WaitVisible(chromedp.CSS(`#details .json`)))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#details`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool error: Failed to fetch weather data: API rate limit exceeded", `"isError": true`, "answers"} {
		if !strings.Contains(text, want) {
			t.Errorf("the details pane lacks %q:\n%s", want, text)
		}
	}
	screenshot(t, ctx, "weather-details")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#errors`))); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != 1 {
		t.Errorf("errors only: %d arrows, want 1", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#errors`)), chromedp.SendKeys(chromedp.CSS(`#search`), "london")); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != 2 {
		t.Errorf("search london: %d arrows, want the call and its answer", n)
	}

	// The hostile cassette: every value is text; nothing runs, no
	// element gets an event handler, no image or audio of a type the page
	// does not play.
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"), ready,
		chromedp.Click(chromedp.CSS(`#cassettes button:nth-child(2)`)),
		chromedp.WaitVisible(chromedp.CSS(`#diagrams .row`)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range hostile.Messages {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#diagrams .row[data-seq="%d"]`, i)))); err != nil {
			t.Fatal(err)
		}
		if n := count(ctx, t, "[onerror],[onload],[onmouseover],[onplay],iframe,script:not([src])"); n != 0 {
			t.Errorf("message %d: %d elements with handlers or inline scripts", i, n)
		}
		if n := count(ctx, t, "#details img, #details audio"); n != 0 {
			t.Errorf("message %d: %d images or audio of a hostile type shown", i, n)
		}
		if n := count(ctx, t, "#details a, #details [href], #details [src]"); n != 0 {
			t.Errorf("message %d: %d links or sources in the details", i, n)
		}
		if i == 1 { // the result with the hostile content blocks: shown as text
			details := textOf(ctx, t, "#details")
			for _, want := range []string{`not shown: mimeType "text/html"`, `not shown: mimeType "image/svg+xml"`, "javascript:alert(7)", "<b onmouseover=alert(2)>bold</b>"} {
				if !strings.Contains(details, want) {
					t.Errorf("the hostile result's details lack %q:\n%s", want, details)
				}
			}
		}
	}
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned === 1`))
	if err != nil || pwned {
		t.Errorf("window.pwned set: %v %v", pwned, err)
	}
	screenshot(t, ctx, "hostile")
}

// TestBrowserHTMLFile: the file written by --html works from file://,
// with the network off (it loads nothing).
func TestBrowserHTMLFile(t *testing.T) {
	docs := Cassettes{load(t, "weather.json"), load(t, "everything-http.json")}
	path := filepath.Join(t.TempDir(), "view.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, docs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), ready); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != len(docs[0].Messages) {
		t.Errorf("%d arrows from file://, want %d", n, len(docs[0].Messages))
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#split`))); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .diagram"); n != 2 {
		t.Errorf("side by side: %d diagrams, want 2", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#tools-button`))); err != nil {
		t.Fatal(err)
	}
	text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#details`)))
	if !strings.Contains(text, "tools of everything-http.json") || !strings.Contains(text, "inputSchema") {
		t.Errorf("the tools pane:\n%.500s", text)
	}
	screenshot(t, ctx, "file-split-tools")
}

// bigCassette is a session of n/2 calls and their answers: n messages.
func bigCassette(n int) *cassettes.Cassette {
	c := cassettes.New()
	for i := 1; i <= n/2; i++ {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": map[string]any{"name": "get_weather", "arguments": map[string]any{"location": fmt.Sprintf("city %d", i)}}})
		resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("weather of city %d", i)}}}})
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, Request: req,
			Response: &cassettes.Message{From: cassettes.FromServer, Message: resp}})
	}
	return c
}

// TestBrowserTenThousandMessages: a cassette of 10,000 messages is
// interactive within a second of navigation (DESIGN.md's bar): the page
// has drawn its rows, and a jump to the end and a click answer at once.
// The figure is logged; the bar is checked by BenchmarkBrowserTenThousand.
func TestBrowserTenThousandMessages(t *testing.T) {
	doc := Build("big.json", bigCassette(10000))
	srv := httptest.NewServer(Handler(Cassettes{doc}))
	defer srv.Close()
	ctx := browser(t)
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	drawn := count(ctx, t, "#diagrams .row")
	if drawn == 0 || drawn > 200 {
		t.Errorf("%d rows in the document, want only those in view (virtual scrolling)", drawn)
	}
	start = time.Now()
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#diagrams .scroll").scrollTop = 1e9, undefined`),
		chromedp.WaitVisible(chromedp.CSS(`#diagrams .row[data-seq="9999"]`)),
		chromedp.Click(chromedp.CSS(`#diagrams .row[data-seq="9999"]`)))
	if err != nil {
		t.Fatal(err)
	}
	last, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#details h2`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(last, "weather of city 5000") {
		t.Errorf("the last message's details: %q", last)
	}
	t.Logf("10,000 messages: interactive %v after navigation; scroll to the end and click: %v; %d rows in the document", loaded.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), drawn)
	screenshot(t, ctx, "ten-thousand")
}

// BenchmarkBrowserTenThousand measures the time from navigation to an
// interactive page of 10,000 messages (bar: 1 s).
func BenchmarkBrowserTenThousand(b *testing.B) {
	doc := Build("big.json", bigCassette(10000))
	srv := httptest.NewServer(Handler(Cassettes{doc}))
	defer srv.Close()
	ctx := browser(b)
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
			b.Fatal(err)
		}
	}
}

// textOf is the text of the first element that selector selects.
func textOf(ctx context.Context, t *testing.T, selector string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBrowserReplayReport: the page of a past replay (view --report): the
// miss drawn in mcpmock's lane and marked, its explanation with the field
// diff in the details pane, the recorded requests no client used marked,
// and the replay panel.
func TestBrowserReplayReport(t *testing.T) {
	d := annotated(t)
	srv := httptest.NewServer(Handler(Cassettes{d}))
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != len(d.Messages) {
		t.Errorf("%d arrows, want one per message: %d", n, len(d.Messages))
	}
	if n := count(ctx, t, "#diagrams .row.miss.from-mcpmock"); n != 1 {
		t.Errorf("%d misses marked in mcpmock's lane, want 1", n)
	}
	if n, want := count(ctx, t, "#diagrams .row.unused"), len(d.Replay.Unused); n != want || want == 0 {
		t.Errorf("%d requests marked unused, want %d", n, want)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#diagrams .row.miss`)), chromedp.WaitVisible(chromedp.CSS(`#details pre.diff`))); err != nil {
		t.Fatal(err)
	}
	details := textOf(ctx, t, "#details")
	for _, want := range []string{"missed: tools/call get_weather", `recorded "New York", live "Berlin"`, "closest: recorded interaction #2", `string("Berlin")`} {
		if !strings.Contains(details, want) {
			t.Errorf("the miss's details lack %q:\n%s", want, details)
		}
	}
	screenshot(t, ctx, "report-miss")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#replay-button`))); err != nil {
		t.Fatal(err)
	}
	details = textOf(ctx, t, "#details")
	if !strings.Contains(details, "replay of weather.json (report weather.report.json)") || !strings.Contains(details, "recorded requests no client used") {
		t.Errorf("the replay panel:\n%s", details)
	}
	screenshot(t, ctx, "report-panel")
}

// TestBrowserKinds: the content blocks of a result drawn (text, an image
// as an image, audio playable, a resource, a resource link as text), the
// HTTP facts and the recorded latency, mcpmock's own answers in its lane,
// a list_changed with the list before and after it, tools/list summarised.
func TestBrowserKinds(t *testing.T) {
	d := load(t, "kinds.json")
	srv := httptest.NewServer(Handler(Cassettes{d}))
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row.session-start[data-session=\"2\"]"); n != 1 || len(d.Sessions) != 2 {
		t.Errorf("%d rows start session 2 (of %d sessions), want 1", n, len(d.Sessions))
	}
	if n := count(ctx, t, "#diagrams .row.by-mcpmock"); n != 2 {
		t.Errorf("%d answers drawn from mcpmock's lane, want 2 (the guard's refusal and the scripted error)", n)
	}
	seqOf := func(pred func(m Message) bool) int {
		for _, m := range d.Messages {
			if pred(m) {
				return m.Seq
			}
		}
		t.Fatal("no such message")
		return -1
	}
	click := func(seq int) string {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#diagrams .row[data-seq="%d"]`, seq)))); err != nil {
			t.Fatal(err)
		}
		return textOf(ctx, t, "#details")
	}
	paris := seqOf(func(m Message) bool { return m.Kind == "response" && strings.HasPrefix(m.Summary, "Sunny") })
	details := click(paris)
	if n := count(ctx, t, `#details img[src^="data:image/png;base64,"]`); n != 1 {
		t.Errorf("%d images shown, want the PNG", n)
	}
	if n := count(ctx, t, `#details audio[controls][src^="data:audio/wav;base64,"]`); n != 1 {
		t.Errorf("%d audio players, want the WAV", n)
	}
	if n := count(ctx, t, `#details a`); n != 0 {
		t.Errorf("%d links in the details: a resource link is shown as text", n)
	}
	for _, want := range []string{"Sunny, 22°C", "file:///forecast.txt", "Tomorrow: rain", "map of Paris file:///maps/paris.png", "status", "200", "request header", "Mcp-Session-Id: s-1", "event ids", "e1, e2, e3", "answers"} {
		if !strings.Contains(details, want) {
			t.Errorf("the result's details lack %q:\n%.2000s", want, details)
		}
	}
	screenshot(t, ctx, "kinds-content")
	details = click(paris - 3) // the call
	if !strings.Contains(details, "latency") || !strings.Contains(details, "40.0 ms (recorded)") {
		t.Errorf("the call's details lack its recorded latency:\n%.1000s", details)
	}
	changed := seqOf(func(m Message) bool { return m.Method == "notifications/tools/list_changed" })
	details = click(changed)
	for _, want := range []string{"tools before the change", "tools after the change", "old_tool", "new_tool", "added", "removed", "changed", "units"} {
		if !strings.Contains(details, want) {
			t.Errorf("the list_changed's details lack %q:\n%.2000s", want, details)
		}
	}
	screenshot(t, ctx, "kinds-list-changed")
	details = click(seqOf(func(m Message) bool { return m.Kind == "response" && m.Method == "tools/list" }))
	if !strings.Contains(details, "2 tools") || !strings.Contains(details, "inputSchema") || !strings.Contains(details, "Weather of a city") {
		t.Errorf("the tools/list's details:\n%.1500s", details)
	}
	sampling := seqOf(func(m Message) bool { return m.Kind == "request" && m.Method == "sampling/createMessage" })
	if details := click(sampling); !strings.Contains(details, "Summarise the weather") || !strings.Contains(details, "answered by") {
		t.Errorf("the sampling request's details:\n%.1500s", details)
	}
	// Filters: by method, by direction, errors only.
	err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#method`), "tools/list"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("method").dispatchEvent(new Event("change")), undefined`))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != 4 {
		t.Errorf("method tools/list: %d arrows, want 4 (two lists and their answers)", n)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#method`), ""), chromedp.SetValue(chromedp.CSS(`#dir`), "server"),
		chromedp.Evaluate[chromedp.Void](`["method","dir"].forEach((id) => document.getElementById(id).dispatchEvent(new Event("change"))), undefined`))
	if err != nil {
		t.Fatal(err)
	}
	server := 0
	for _, m := range d.Messages {
		if m.From == "server" {
			server++
		}
	}
	if n := count(ctx, t, "#diagrams .row"); n != server {
		t.Errorf("server to client: %d arrows, want %d", n, server)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#dir`), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("dir").dispatchEvent(new Event("change")), undefined`),
		chromedp.Click(chromedp.CSS(`#errors`)))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#diagrams .row"); n != 4 {
		t.Errorf("errors only: %d arrows, want 4 (two tool errors, two protocol errors)", n)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#errors`)), chromedp.SetValue(chromedp.CSS(`#axis`), "time"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("axis").dispatchEvent(new Event("change")), undefined`))
	if err != nil {
		t.Fatal(err)
	}
	if when := textOf(ctx, t, `#diagrams .row[data-seq="1"] .when`); when != "4.5 ms" {
		t.Errorf("on the time axis the answer to initialize is at %q, want 4.5 ms", when)
	}
	screenshot(t, ctx, "kinds-time-axis")
}

// binaries builds mcpmock and the weather example's server into dir.
func binaries(t *testing.T) (mcpmock, server string) {
	t.Helper()
	dir := t.TempDir()
	mcpmock, server = filepath.Join(dir, "mcpmock"), filepath.Join(dir, "weather-server")
	for _, b := range [][2]string{{mcpmock, "../cmd/mcpmock"}, {server, "../examples/weather/server"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	return mcpmock, server
}

// uiLine catches the URL of --ui on mcpmock's stderr.
type uiLine struct {
	mu  sync.Mutex
	buf strings.Builder
	url chan string
}

func (u *uiLine) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	before := u.buf.String()
	u.buf.Write(p)
	if !strings.Contains(before, "mcpmock: ui: listening on ") {
		if _, rest, ok := strings.Cut(u.buf.String(), "mcpmock: ui: listening on "); ok {
			if url, _, ok := strings.Cut(rest, " "); ok {
				u.url <- url
			}
		}
	}
	return len(p), nil
}

func (u *uiLine) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.buf.String()
}

// open is a pipe to mcpmock's stdin that the client cannot close: mcpmock
// then lives on after the client's session, and so does its page.
type open struct{ io.Writer }

func (open) Close() error { return nil }

// tapped starts mcpmock with args (--ui 127.0.0.1:0 added) and returns
// the URL of its page and the pipes a client talks through.
func tapped(t *testing.T, mcpmock string, args ...string) (url string, toClient io.ReadCloser, toServer io.WriteCloser, stderr *uiLine) {
	t.Helper()
	cmd := exec.Command(mcpmock, append(args[:1:1], append([]string{"--ui", "127.0.0.1:0"}, args[1:]...)...)...)
	stderr = &uiLine{url: make(chan string, 1)}
	cmd.Stderr = stderr
	stdin, _ := cmd.StdinPipe()
	toServer = open{stdin}
	toClient, _ = cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	select {
	case url = <-stderr.url:
	case <-time.After(30 * time.Second):
		t.Fatalf("no ui line on stderr:\n%s", stderr)
	}
	return url, toClient, toServer, stderr
}

// TestBrowserLive: the page of record --ui receives the messages of a
// go-sdk client talking through the tap as they pass; the page of replay
// --ui shows a deliberate miss marked, with its explanation and field
// diff, and the recorded cassette beside the traffic.
func TestBrowserLive(t *testing.T) {
	mcpmock, server := binaries(t)
	ctx := browser(t)
	t.Run("record", func(t *testing.T) {
		url, r, w, stderr := tapped(t, mcpmock, "record", "-c", filepath.Join(t.TempDir(), "rec.json"), "--", server)
		if err := chromedp.Do(ctx, chromedp.Navigate(url), ready); err != nil {
			t.Fatal(err)
		}
		if n := count(ctx, t, "#diagrams .row"); n != 0 {
			t.Errorf("%d arrows before the client came", n)
		}
		results, err := weather.RunClient(context.Background(), r, w)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if len(results) != 3 {
			t.Errorf("the client's results: %q", results)
		}
		// The handshake, 3 calls and their answers at least.
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`Number(document.body.dataset.messages) >= 8 && document.querySelectorAll("#diagrams .row").length >= 8`, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			t.Fatalf("the live page did not get the messages: %v (it has %s)", err, textOf(ctx, t, "#diagrams"))
		}
		diagram := textOf(ctx, t, "#diagrams")
		for _, want := range []string{"tools/call get_weather", "New York", "Atlantis"} {
			if !strings.Contains(diagram, want) {
				t.Errorf("the live diagram lacks %q:\n%s", want, diagram)
			}
		}
		if n := count(ctx, t, "#diagrams .row.tool-error"); n != 1 {
			t.Errorf("%d tool errors marked, want Atlantis's", n)
		}
		screenshot(t, ctx, "live-record")
	})
	t.Run("replay", func(t *testing.T) {
		// A cassette without London: the client's second call misses.
		b, err := os.ReadFile("../examples/weather/testdata/weather.json")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "weather.json")
		os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "London", "Paris")), 0o644)
		url, r, w, _ := tapped(t, mcpmock, "replay", "-c", path)
		if err := chromedp.Do(ctx, chromedp.Navigate(url), ready); err != nil {
			t.Fatal(err)
		}
		if _, err := weather.RunClient(context.Background(), r, w); err == nil {
			t.Error("the client's call of London matched a cassette without London")
		}
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#diagrams .row.miss`)), chromedp.Click(chromedp.CSS(`#diagrams .row.miss`)),
			chromedp.WaitVisible(chromedp.CSS(`#details pre.diff`)))
		if err != nil {
			t.Fatal(err)
		}
		details := textOf(ctx, t, "#details")
		for _, want := range []string{"missed: tools/call get_weather", `live "London"`, "closest: recorded interaction #", `string("London")`} {
			if !strings.Contains(details, want) {
				t.Errorf("the miss's details lack %q:\n%s", want, details)
			}
		}
		if n := count(ctx, t, "#diagrams .row.by-mcpmock"); n != 1 {
			t.Errorf("%d answers from mcpmock's lane, want the miss's", n)
		}
		if n := count(ctx, t, "#diagrams .row.kind-note"); n == 0 {
			t.Error("the miss's explanation is no note of mcpmock's lane")
		}
		if n := count(ctx, t, "#cassettes button"); n != 2 {
			t.Errorf("%d cassettes on the page, want the traffic and the recorded one", n)
		}
		screenshot(t, ctx, "live-replay-miss")
		// The first call matched: its details link to the recorded
		// interaction, which opens beside the traffic.
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#diagrams .row.outcome-matched`)))
		if err != nil {
			t.Fatal(err)
		}
		if details := textOf(ctx, t, "#details"); !strings.Contains(details, "answered by recorded #") {
			t.Errorf("a matched request's details:\n%s", details)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#details .outcome button.link`))); err != nil {
			t.Fatal(err)
		}
		if n := count(ctx, t, "#diagrams .diagram"); n != 2 {
			t.Errorf("%d diagrams after show it, want the traffic and the recorded cassette side by side", n)
		}
		if n := count(ctx, t, "#diagrams .row.unused"); n == 0 {
			t.Error("no recorded request marked unused (London's place, Paris, was used by no one)")
		}
		screenshot(t, ctx, "live-replay-side-by-side")
	})
}
