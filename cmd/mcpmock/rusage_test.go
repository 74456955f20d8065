package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestWriteRusageAppendsALine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu")
	writeRusage(path)
	writeRusage(path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, one a call; got %q", data)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("want user and system seconds; got %q", l)
		}
		for _, s := range f {
			if v, err := strconv.ParseFloat(s, 64); err != nil || v < 0 {
				t.Fatalf("%q is not a count of seconds", s)
			}
		}
	}
	writeRusage("") // no path: nothing written, no panic
}
