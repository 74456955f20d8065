//go:build unix

package cassettes

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadRefusesDevices: a named pipe (which would block a reader) and
// /dev/zero (which never ends) are refused at once.
func TestLoadRefusesDevices(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe, not a regular file",
		"/dev/zero": "/dev/zero is a character device, not a regular file",
	} {
		_, err := Load(path)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", path, err, want)
		}
		_, err = ReadFile(path)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", path, err)
		}
	}
}
