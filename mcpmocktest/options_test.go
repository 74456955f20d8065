package mcpmocktest_test

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/mcpmocktest"
	"github.com/mcpmock/mcpmock/replayer"
)

const weatherSchema = `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`

// optionsCassette declares three tools and answers get_weather for Paris.
func optionsCassette() *cassettes.Cassette {
	return mcpmocktest.NewCassette().
		Tool("get_weather", weatherSchema).
		Tool("get_forecast", nil).
		Tool("echo", nil).
		Call("get_weather", map[string]any{"location": "Paris"}).Return("Sunny").
		Build()
}

// connectSDK connects a go-sdk client to the pipes r and w.
func connectSDK(t *testing.T, r io.ReadCloser, w io.WriteCloser) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callText calls the tool and describes the answer: "TEXT", "tool error:
// TEXT" or "error: MESSAGE".
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "error: " + err.Error()
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if res.IsError {
		return "tool error: " + strings.Join(texts, " ")
	}
	return strings.Join(texts, " ")
}

func TestOptionsOverlays(t *testing.T) {
	overlay, err := mcpmocktest.Overlay(mcpmocktest.OnCall("get_weather").ReturnToolError("overlaid"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "overlay.json")
	if err := cassettes.Save(file, overlay); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts mcpmocktest.Options
		want string
	}{
		{"none", mcpmocktest.Options{}, "Sunny"},
		{"file", mcpmocktest.Options{OverlayFiles: []string{file}}, "tool error: overlaid"},
		{"cassette", mcpmocktest.Options{Overlays: []*cassettes.Cassette{overlay}}, "tool error: overlaid"},
		{"stub after overlay", mcpmocktest.Options{
			Overlays: []*cassettes.Cassette{overlay},
			Stubs:    []*mcpmocktest.Stub{mcpmocktest.OnCall("get_weather").Return("stubbed")},
		}, "tool error: overlaid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpmocktest.NewServerFromCassette(t, optionsCassette(), &tt.opts)
			r, w := srv.Conn()
			cs := connectSDK(t, r, w)
			if got := callText(t, cs, "get_weather", map[string]any{"location": "Paris"}); got != tt.want {
				t.Errorf("get_weather(Paris) = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOptionsOverlayFileMissing checks that a missing overlay file fails
// the test and names the file.
func TestOptionsOverlayFileMissing(t *testing.T) {
	ft := &fatalT{fakeT: fakeT{TB: t}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpmocktest.NewServerFromCassette(ft, optionsCassette(), &mcpmocktest.Options{OverlayFiles: []string{"testdata/nope.json"}})
	}()
	<-done
	if !strings.Contains(ft.fatal, "testdata/nope.json") {
		t.Errorf("Fatal = %q, want it to name testdata/nope.json", ft.fatal)
	}
}

// fatalT records the Fatal of a Server and ends its goroutine.
type fatalT struct {
	fakeT
	fatal string
}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalT) Fatal(args ...any) {
	f.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestOptionsSeed(t *testing.T) {
	overlay, err := mcpmocktest.Overlay(mcpmocktest.OnCall("get_weather").ReturnToolError("flaky"))
	if err != nil {
		t.Fatal(err)
	}
	overlay.Interactions[0].When.Probability = 0.5
	pattern := func(seed uint64) string {
		srv := mcpmocktest.NewServerFromCassette(t, optionsCassette(), &mcpmocktest.Options{
			Overlays: []*cassettes.Cassette{overlay}, Seed: seed})
		r, w := srv.Conn()
		cs := connectSDK(t, r, w)
		var b strings.Builder
		for range 32 {
			if callText(t, cs, "get_weather", map[string]any{"location": "Paris"}) == "Sunny" {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	a, again, other := pattern(1), pattern(1), pattern(2)
	if a != again {
		t.Errorf("seed 1 gave %s, then %s", a, again)
	}
	if a == other {
		t.Errorf("seeds 1 and 2 both gave %s", a)
	}
}

func TestOptionsLatency(t *testing.T) {
	const fixed = 100 * time.Millisecond
	srv := mcpmocktest.NewServerFromCassette(t, optionsCassette(), &mcpmocktest.Options{
		Latency: replayer.Latency{Fixed: fixed}})
	r, w := srv.Conn()
	cs := connectSDK(t, r, w)
	start := time.Now()
	if got := callText(t, cs, "get_weather", map[string]any{"location": "Paris"}); got != "Sunny" {
		t.Fatalf("get_weather(Paris) = %q", got)
	}
	// A lower bound only: the delay is at least Fixed, however slow the machine.
	if took := time.Since(start); took < fixed {
		t.Errorf("the call took %v, want at least the fixed latency %v", took, fixed)
	}
}

func TestOptionsPageSize(t *testing.T) {
	for _, tt := range []struct {
		pageSize, wantFirst int
		wantMore            bool
	}{{0, 3, false}, {1, 1, true}, {2, 2, true}} {
		t.Run(fmt.Sprint(tt.pageSize), func(t *testing.T) {
			srv := mcpmocktest.NewServerFromCassette(t, optionsCassette(), &mcpmocktest.Options{PageSize: tt.pageSize})
			r, w := srv.Conn()
			cs := connectSDK(t, r, w)
			page, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Tools) != tt.wantFirst || (page.NextCursor != "") != tt.wantMore {
				t.Errorf("first page: %d tools, next cursor %q; want %d tools, more %v", len(page.Tools), page.NextCursor, tt.wantFirst, tt.wantMore)
			}
			var all []string
			for tool, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, tool.Name)
			}
			if got := strings.Join(all, ","); got != "get_weather,get_forecast,echo" {
				t.Errorf("all pages: %s", got)
			}
		})
	}
}

func TestOptionsNoSchemaValidation(t *testing.T) {
	for _, tt := range []struct {
		off  bool
		want string // in the answer
	}{{false, "tool error: Invalid arguments"}, {true, "no recorded tools/call"}} {
		t.Run(fmt.Sprint("off=", tt.off), func(t *testing.T) {
			srv := mcpmocktest.NewServerFromCassette(t, optionsCassette(), &mcpmocktest.Options{
				NoSchemaValidation: tt.off, AllowMisses: true})
			r, w := srv.Conn()
			cs := connectSDK(t, r, w)
			got := callText(t, cs, "get_weather", map[string]any{"location": 5})
			t.Logf("answer: %s", got)
			if !strings.Contains(got, tt.want) {
				t.Errorf("get_weather(5) = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestPipe(t *testing.T) {
	e, err := replayer.New(optionsCassette(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, w := mcpmocktest.Pipe(t, e)
	cs := connectSDK(t, r, w)
	if got := callText(t, cs, "get_weather", map[string]any{"location": "Paris"}); got != "Sunny" {
		t.Errorf("get_weather(Paris) = %q, want Sunny", got)
	}
	if got := callText(t, cs, "get_weather", map[string]any{"location": "Rome"}); !strings.HasPrefix(got, "error:") {
		t.Errorf("get_weather(Rome) = %q, want a JSON-RPC error", got)
	}
	if st := e.Stats(); st.Matched == 0 {
		t.Errorf("Stats = %+v, want matched requests", st)
	}
}

// TestPipeEndsWithTest checks that the session of a Pipe ends when the
// test does, even though the client never closes it.
func TestPipeEndsWithTest(t *testing.T) {
	e, err := replayer.New(optionsCassette(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader
	t.Run("sub", func(t *testing.T) {
		r, _ = mcpmocktest.Pipe(t, e)
	})
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after the test ended: %d bytes, %v; want io.EOF", n, err)
	}
}
