package httpguard

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// holdOrEcho answers a body's length; a body that starts with "hold"
// waits until release is closed, its bytes held in flight, after telling
// held.
func holdOrEcho(held chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if bytes.HasPrefix(b, []byte("hold")) {
			held <- struct{}{}
			<-release
		}
		fmt.Fprintf(w, "%d", len(b))
	})
}

// postBody posts body, with its length or chunked, and returns the answer.
func postBody(t *testing.T, url string, body []byte, chunked bool) (*http.Response, string) {
	t.Helper()
	var src io.Reader = bytes.NewReader(body)
	if chunked {
		src = io.MultiReader(src) // no length known: sent chunked
	}
	return postReader(t, url, src, nil)
}

// TestInFlightBudget: while one large body is held, another that does not
// fit in what is left of MaxInFlightBytes is refused with 503, Retry-After
// and a JSON-RPC error naming the flag, with or without a Content-Length;
// a body that fits is served; once the first is done, the second passes.
func TestInFlightBudget(t *testing.T) {
	held, release := make(chan struct{}), make(chan struct{})
	u := serveLimited(t, holdOrEcho(held, release), &Options{MaxInFlightBytes: 1 << 20})
	big := append([]byte("hold"), bytes.Repeat([]byte("x"), 600<<10)...)
	first := make(chan string, 1)
	go func() {
		resp, body := postBody(t, u, big, false)
		first <- fmt.Sprint(resp.StatusCode, " ", body)
	}()
	<-held
	second := bytes.Repeat([]byte("y"), 600<<10)
	for _, chunked := range []bool{false, true} {
		resp, body := postBody(t, u, second, chunked)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, `"code":-32000`) || !strings.Contains(body, "--max-inflight-bytes") {
			t.Errorf("a second 600 KiB body (chunked %v) beyond the budget: %d Retry-After %q %q, want 503 with Retry-After and a JSON-RPC error naming --max-inflight-bytes",
				chunked, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if resp, body := postBody(t, u, bytes.Repeat([]byte("z"), 100<<10), false); resp.StatusCode != 200 || body != fmt.Sprint(100<<10) {
		t.Errorf("a 100 KiB body within the budget: %d %q, want 200", resp.StatusCode, body)
	}
	close(release)
	if got, want := <-first, fmt.Sprint("200 ", len(big)); got != want {
		t.Errorf("the held body: %q, want %q", got, want)
	}
	for _, chunked := range []bool{false, true} {
		if resp, _ := postBody(t, u, second, chunked); resp.StatusCode != 200 {
			t.Errorf("the second body (chunked %v) after the first is done: %d, want 200", chunked, resp.StatusCode)
		}
	}
	resp, body := postBody(t, u, bytes.Repeat([]byte("w"), 1<<20+1), false)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "--max-inflight-bytes") {
		t.Errorf("a body larger than the whole budget: %d %q, want 413 naming --max-inflight-bytes", resp.StatusCode, body)
	}
}

// allocatedPerRequest is the bytes allocated by one request through h,
// the mean of runs.
func allocatedPerRequest(t *testing.T, h http.Handler, body []byte, runs int) float64 {
	t.Helper()
	serve := func() {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %.200s", rec.Code, rec.Body)
		}
	}
	serve() // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		serve()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}

// TestBodyReadOnce: the guard reads a body of known length into one buffer
// of its size, and a handler that takes it with Bytes copies nothing.
// (The guard used io.ReadAll, which grows its buffer: 4.07× the body.)
func TestBodyReadOnce(t *testing.T) {
	const size = 8 << 20
	body := bytes.Repeat([]byte("a"), size)
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := Bytes(r)
		if !ok {
			b, _ = io.ReadAll(r.Body)
		}
		fmt.Fprint(w, len(b))
	}), nil)
	per := allocatedPerRequest(t, h, body, 5)
	t.Logf("%.0f bytes allocated for a body of %d (%.2f×)", per, size, per/size)
	if per > 1.1*size {
		t.Errorf("%.0f bytes allocated a request for a body of %d bytes (%.2f copies), want at most one copy", per, size, per/size)
	}
}

// BenchmarkGuardPOST is the guard's cost for a POST of a session (the body
// read once, the session noted) at three body sizes: the bytes allocated a
// request stay about one body, and the time linear in it.
func BenchmarkGuardPOST(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("body=%d", size), func(b *testing.B) {
			h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, ok := Bytes(r); !ok {
					b.Fatal("the body is not handed on")
				}
				if r.Header.Get("Mcp-Session-Id") == "" {
					w.Header().Set("Mcp-Session-Id", "s1")
				}
			}), nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, initRequest(initBody, nil))
			body := bytes.Repeat([]byte("a"), size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
				r.Header.Set("Mcp-Session-Id", "s1")
				h.ServeHTTP(discard{}, r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/byte")
		})
	}
}
