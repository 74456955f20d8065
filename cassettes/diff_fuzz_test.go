package cassettes

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDiff: Diff never panics on any two cassettes that load, and a
// cassette diffed with itself has no change.
func FuzzDiff(f *testing.F) {
	seeds, _ := filepath.Glob("../cmd/mcpmock/testdata/diff/*.json")
	var files [][]byte
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			files = append(files, data)
		}
	}
	for i := range files {
		f.Add(files[i], files[(i+1)%len(files)])
	}
	f.Add([]byte(`{"version":1,"interactions":[{"from":"client","request":{"jsonrpc":"2.0","id":1,"method":"tools/list"},"response":{"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"properties":{"x":{"items":{"type":"string"}}},"required":["x",1]}}]}}}}]}`),
		[]byte(`{"version":1,"interactions":[{"from":"client","request":{"jsonrpc":"2.0","id":1,"method":"tools/list"},"response":{"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"properties":{"x":true},"type":[1]}}]}}}}]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		old, err := Parse("a.json", a)
		if err != nil {
			return
		}
		new, err := Parse("b.json", b)
		if err != nil {
			return
		}
		Diff(old, new)
		Diff(new, old)
		if same := Diff(old, old); len(same) != 0 {
			t.Errorf("a cassette diffed with itself has changes: %v", same)
		}
	})
}
