//go:build browser

// The browser tests of the view: the page in a real headless Chromium
// (Debian's chromium, driven with chromedp). They need the browser, so they
// are behind the "browser" build tag; .ci/run installs Chromium and runs
//
//	go test -tags browser -run Browser ./view
//
// VIEW_SCREENSHOTS=DIR keeps a screenshot of each page there, to look at.
package view

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/livelog"
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

func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("VIEW_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Error(err)
		return
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
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

// TestBrowserLive: the page of a live view draws messages as they pass.
func TestBrowserLive(t *testing.T) {
	live := NewLive("live", nil)
	srv := httptest.NewServer(live.Handler())
	t.Cleanup(srv.Close) // after the browser (cleanups run last first): its event stream holds a connection
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), ready); err != nil {
		t.Fatal(err)
	}
	log := slog.New(live)
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Sunny"}]}}`,
	} {
		msg, err := jsonrpc.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		dir := livelog.ToServer
		if i == 1 {
			dir = livelog.ToClient
		}
		livelog.Message(log, dir, msg, 0, "replayed #2")
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`body[data-messages="2"]`)), chromedp.WaitVisible(chromedp.CSS(`#diagrams .row[data-seq="1"]`))); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#diagrams`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "tools/call get_weather") || !strings.Contains(text, "Sunny") || !strings.Contains(text, "[replayed #2]") {
		t.Errorf("the live diagram:\n%s", text)
	}
	screenshot(t, ctx, "live")
}
