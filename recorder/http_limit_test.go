package recorder

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpmock/mcpmock/internal/httpguard"
)

// TestHTTPTapNoBodyBound: a negative MaxBodyBytes is no bound (the rule
// of replayer.HTTPOptions too): a body past the 64 MiB default reaches the
// upstream whole. TestHTTPTapBodyLimit has the zero value (64 MiB).
func TestHTTPTapNoBodyBound(t *testing.T) {
	var got atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	tap, err := NewHTTP(up.URL+"/mcp", rec, &HTTPOptions{MaxBodyBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	head, tail := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`, `"}}`
	pad := int64(httpguard.DefaultMaxBodyBytes + 1)
	size := int64(len(head)+len(tail)) + pad
	r := httptest.NewRequest("POST", "/mcp", io.MultiReader(strings.NewReader(head), io.LimitReader(fill('x'), pad), strings.NewReader(tail)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	tap.ServeHTTP(w, r)
	if w.Code != http.StatusOK || got.Load() != size {
		t.Errorf("a body of %d bytes: %d %.200s, upstream read %d bytes; want 200 and the whole body", size, w.Code, w.Body, got.Load())
	}
}

// fill is an endless reader of one byte.
type fill byte

func (b fill) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
