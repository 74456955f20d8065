//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fifoPath is a named pipe, which nobody writes: opening it to read
// blocks until a writer comes.
var fifoPath = badPath{"named pipe", func(t *testing.T, dir string) string {
	p := filepath.Join(dir, "cassette.json")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return p
}, "cassette.json is a named pipe, not a regular file", true}

// platformBadPaths are the paths of this system that are not regular
// files: a named pipe and devices that never end.
func platformBadPaths() []badPath {
	return []badPath{
		fifoPath,
		{"dev zero", func(t *testing.T, dir string) string { return "/dev/zero" },
			"/dev/zero is a character device, not a regular file", true},
		{"link to dev urandom", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cassette.json")
			if err := os.Symlink("/dev/urandom", p); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			return p
		}, "cassette.json (a symbolic link to /dev/urandom) is a character device, not a regular file", true},
	}
}

// platformRecordBadPaths are those that record may be pointed at in a
// test: not a device, which a broken record could replace.
func platformRecordBadPaths() []badPath { return []badPath{fifoPath} }
