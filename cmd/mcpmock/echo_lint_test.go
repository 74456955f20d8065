package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCassetteLintNamesEchoes: mcpmock cassette lint on an old cassette
// whose tap recorded a resumed stream's echoes names the repeats of SSE
// event ids and the priming event's {}, with where they are.
func TestCassetteLintNamesEchoes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "cassettes", "testdata", "echoes-old.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "cassette", "lint", path)
	p.stdin.Close()
	out, _ := io.ReadAll(p.lines)
	p.wait(t)
	all := string(out) + p.stderr.String()
	for _, want := range []string{
		`line 5, column 5: interaction 1: exchange message 1 is not a JSON-RPC message ("{}")`,
		`line 14, column 5: interaction 4: a server message with SSE event id "1", which interaction 1 recorded already`,
		`line 18, column 5: interaction 8: a server message with SSE event id "4", which interaction 3 recorded already`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("mcpmock cassette lint does not say %q:\n%s", want, all)
		}
	}
}
