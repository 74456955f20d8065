package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpmock/mcpmock/internal/livelog"
)

// TestLogToNowhereIsOff: a live log whose stderr is the null device (what
// a client gives mcpmock when it keeps no stderr: the go-sdk's
// CommandTransport, exec.Cmd with a nil Stderr) makes no lines, also
// behind the record's gate; one to a file or a pipe does.
func TestLogToNowhereIsOff(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name   string
		stderr interface{ Write([]byte) (int, error) }
		off    bool
	}{
		{"null device", null, true},
		{"null device behind a gate", livelog.NewGate(null), true},
		{"file", file, false},
		{"pipe", w, false},
		{"file behind a gate", livelog.NewGate(file), false},
	} {
		for _, format := range []string{"text", "json"} {
			c := &common{log: format}
			log, err := c.logger(tc.stderr)
			if err != nil {
				t.Fatal(err)
			}
			if off := livelog.Off(log); off != tc.off {
				t.Errorf("%s, --log %s: the log is off: %v, want %v", tc.name, format, off, tc.off)
			}
		}
	}
}
