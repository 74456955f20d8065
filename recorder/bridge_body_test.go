package recorder

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestBridgeBodyCopyAllocates: behind the listener's guard, which has read the
// body already, the HTTP-to-stdio bridge takes those bytes instead of
// reading them again into a copy of its own.
func TestBridgeBodyCopyAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race (.ci/run)")
	}
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(testpeer.GoSDK)
	b, err := NewStdioBridge(argv, os.Stderr, rec, &BridgeOptions{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	// The recorder is closed too: its saver, left running, once wrote a
	// save's temporary file into the directory while the test's cleanup
	// removed it ("directory not empty").
	t.Cleanup(func() {
		b.Close()
		rec.Close()
	})
	h := httpguard.Wrap(b, &httpguard.Options{})
	const size = 8 << 20
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", size) + `"}}}`)
	post := func() int {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	if code := post(); code != http.StatusOK {
		t.Fatalf("ping: %d", code)
	}
	// The window holds the posts and all the recording does for them:
	// each interaction is encoded once, by the builder when it completed,
	// so the recording is brought up to date (Sync, then a save) before
	// and after. The saver is kept out of the window (saveMu): a save
	// that came between a request and its answer would encode the
	// unanswered request as well, which a test of the copies must not
	// count (it did, in one run of fifteen, at 6.26×).
	settle := func() {
		rec.Sync()
		if err := rec.save(false); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 4
	var before, after runtime.MemStats
	settle()
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec.saveMu.Lock()
	for range runs {
		post()
	}
	rec.saveMu.Unlock()
	settle()
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated a request for a body of %d (%.2f×)", per, len(body), per/float64(len(body)))
	// Measured with -memprofile: the guard's copy (1×) and the
	// recording's encoding of the message (about 4.7×: indented, into a
	// chunk that grows to hold it) are all that is left; the bridge's own
	// read and its line copy (2×, 8.0× in all before) are gone.
	if per > 7*float64(len(body)) {
		t.Errorf("%.0f bytes allocated a request for a body of %d bytes (%.2f×), want at most 7× (the guard's copy and the recording's encoding)", per, len(body), per/float64(len(body)))
	}
}
