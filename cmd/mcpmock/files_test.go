package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// emptyCassette is a valid cassette with no interactions.
const emptyCassette = `{"version":1,"meta":{},"interactions":[]}` + "\n"

// badPath is a cassette path that is not a regular file: made by make in
// dir, refused with an error that contains want.
type badPath struct {
	name string
	make func(t *testing.T, dir string) string
	want string
	// exists says the path exists (once and new-episodes load it).
	exists bool
}

// portableBadPaths are the paths that every system has.
func portableBadPaths() []badPath {
	return []badPath{
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cassette.json")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, "cassette.json is a directory, not a regular file", true},
		{"dangling link", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "cassette.json")
			if err := os.Symlink("nowhere.json", p); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			return p
		}, "cassette.json is a symbolic link to nowhere.json, which does not exist", false},
	}
}

// TestCassettePathNotRegularFile: every command that loads a cassette or
// an overlay refuses a path that is not a regular file at once, naming it
// and saying what it is (a named pipe blocked replay forever, /dev/zero
// grew it to gigabytes).
func TestCassettePathNotRegularFile(t *testing.T) {
	for _, bp := range append(portableBadPaths(), platformBadPaths()...) {
		t.Run(bp.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := bp.make(t, dir)
			good := filepath.Join(dir, "good.json")
			if err := os.WriteFile(good, []byte(emptyCassette), 0o644); err != nil {
				t.Fatal(err)
			}
			commands := [][]string{
				{"replay", "-c", path},
				{"replay", "-c", good, "--overlay", path},
				{"cassette", "lint", path},
				{"cassette", "show", path},
			}
			if bp.exists {
				commands = append(commands,
					[]string{"replay", "--mode", "once", "-c", path, "--", "/nonexistent/mcp-server"},
					[]string{"replay", "--mode", "new-episodes", "-c", path, "--", "/nonexistent/mcp-server"})
			}
			for _, args := range commands {
				p := start(t, args...)
				p.stdin.Close()
				if s := p.wait(t); s != 1 {
					t.Errorf("mcpmock %s: exit status %d, want 1", strings.Join(args, " "), s)
				}
				if stderr := p.stderr.String(); !strings.Contains(stderr, bp.want) {
					t.Errorf("mcpmock %s: stderr does not say %q:\n%s", strings.Join(args, " "), bp.want, stderr)
				}
			}
		})
	}
}

// TestRecordRefusesNotRegularFile: record refuses a cassette path that
// exists and is not a regular file before it starts the server, and
// leaves it as it was.
func TestRecordRefusesNotRegularFile(t *testing.T) {
	for _, bp := range append(portableBadPaths()[:1], platformRecordBadPaths()...) {
		t.Run(bp.name, func(t *testing.T) {
			t.Parallel()
			path := bp.make(t, t.TempDir())
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			p := start(t, "record", "-c", path, "--", "/nonexistent/mcp-server")
			p.stdin.Close()
			if s := p.wait(t); s != 1 {
				t.Errorf("exit status %d, want 1", s)
			}
			stderr := p.stderr.String()
			if !strings.Contains(stderr, bp.want) || strings.Contains(stderr, "nonexistent") {
				t.Errorf("stderr does not say %q before starting the server:\n%s", bp.want, stderr)
			}
			if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() {
				t.Errorf("the path was changed: %v, %v (was %v)", after, err, before.Mode())
			}
		})
	}
}

// recordSession records one go-sdk client session into path through
// mcpmock record and checks that it succeeded.
func recordSession(t *testing.T, path string) {
	t.Helper()
	p := start(t, append([]string{"record", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	session(t, p, "go-sdk", "")
	p.stdin.Close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("record -c %s exited with %d:\n%s", path, s, p.stderr)
	}
}

// loadRecorded loads the cassette at path and checks that it holds a
// recorded session.
func loadRecorded(t *testing.T, path string) {
	t.Helper()
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) < 3 {
		t.Errorf("%s holds %d interactions, want a recorded session", path, len(c.Interactions))
	}
}

// noTempFiles fails if dir holds mcpmock's temporary files.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), ".spill-") {
			t.Errorf("a temporary file was left in %s: %s", dir, e.Name())
		}
	}
}

// TestRecordThroughSymlink: a cassette that is a symbolic link stays one;
// the recording goes to the file it points to (created when the link
// dangles), in that file's directory.
func TestRecordThroughSymlink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool
	}{{"to a cassette", true}, {"dangling", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			targetDir := filepath.Join(dir, "store")
			target := filepath.Join(targetDir, "real.json")
			if tc.exists {
				if err := os.Mkdir(targetDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, []byte(emptyCassette), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink(filepath.Join("store", "real.json"), link); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			recordSession(t, link)
			fi, err := os.Lstat(link)
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
			}
			if got, err := os.Readlink(link); err != nil || got != filepath.Join("store", "real.json") {
				t.Errorf("the link points to %q (%v)", got, err)
			}
			loadRecorded(t, target)
			noTempFiles(t, dir)
			noTempFiles(t, targetDir)
		})
	}
}

// TestRecordCreatesDirectories: record -c testdata/sub/weather.json
// creates the missing directories; a path whose directory cannot be made
// fails with an error that names the cassette (not a temporary file) and
// says why.
func TestRecordCreatesDirectories(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "testdata", "sub", "weather.json")
	recordSession(t, path)
	loadRecorded(t, path)

	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "weather.json")
	p := start(t, append([]string{"record", "-c", bad, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	p.stdin.Close()
	if s := p.wait(t); s != 1 {
		t.Errorf("exit status %d, want 1", s)
	}
	stderr := p.stderr.String()
	if want := `save cassette "` + bad + `"`; !strings.Contains(stderr, want) || !strings.Contains(stderr, "not a directory") {
		t.Errorf("stderr does not name the cassette (%s) and say why:\n%s", want, stderr)
	}
	if strings.Contains(stderr, ".spill-") || strings.Contains(stderr, ".tmp-") {
		t.Errorf("stderr names a temporary file:\n%s", stderr)
	}
}

// TestFailedRecordLeavesNoFile: a record that fails before any
// interaction completed writes no file, leaves an existing cassette as it
// was, and prints the real error once, before the summary.
func TestFailedRecordLeavesNoFile(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing.Close() // nothing listens there now: connections are refused
	server := peerCommand(testpeer.GoSDKLegacy)
	for _, tc := range []struct {
		name  string
		args  []string
		input string // the client's lines
		// want is in the error; "" when the tap ends normally (the
		// client got an error for its request).
		want   string
		status int
	}{
		{"no such command", []string{"--", "/nonexistent/mcp-server"}, "", `start server "/nonexistent/mcp-server"`, 1},
		{"port in use", append([]string{"--listen", taken.Addr().String(), "--"}, server...), "", "address already in use", 1},
		{"upstream not a URL", []string{"--upstream", "::bad"}, "", "is not an http(s) URL", 1},
		// The client gets an error for its request, and the record fails:
		// the server never answered (it exited 0 once).
		{"upstream not answering", []string{"--upstream", "http://" + refusing.Addr().String() + "/mcp"}, initReq + "\n", "did not answer: ", 1},
	} {
		for _, existing := range []bool{false, true} {
			name := tc.name + "/new"
			if existing {
				name = tc.name + "/existing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := filepath.Join(dir, "sub", "c.json")
				if existing {
					if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(emptyCassette), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p := start(t, append([]string{"record", "-c", path}, tc.args...)...)
				if _, err := p.stdin.Write([]byte(tc.input)); err != nil {
					t.Fatal(err)
				}
				p.stdin.Close()
				if s := p.wait(t); s != tc.status {
					t.Errorf("exit status %d, want %d", s, tc.status)
				}
				stderr := p.stderr.String()
				summary := strings.Index(stderr, "recorded ")
				if summary < 0 || !strings.Contains(stderr[summary:], "nothing saved") {
					t.Errorf("the summary does not say that nothing was saved:\n%s", stderr)
				}
				if tc.want != "" {
					if n := strings.Count(stderr, tc.want); n != 1 || strings.Index(stderr, tc.want) > summary {
						t.Errorf("the error (%q) is printed %d times, or after the summary:\n%s", tc.want, n, stderr)
					}
				}
				if existing {
					if b, err := os.ReadFile(path); err != nil || string(b) != emptyCassette {
						t.Errorf("the existing cassette was changed: %q, %v", b, err)
					}
					noTempFiles(t, filepath.Dir(path))
					return
				}
				if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
					t.Errorf("the failed record left %v (%v)", entries, err)
				}
			})
		}
	}
}

// TestOnceAfterFailedRecord: once records when the cassette is missing; a
// record that failed left no file, so the next run records again instead
// of replaying an empty cassette.
func TestOnceAfterFailedRecord(t *testing.T) {
	path := tempCassette(t)
	failed := start(t, "replay", "--mode", "once", "-c", path, "--", "/nonexistent/mcp-server")
	failed.stdin.Close()
	if s := failed.wait(t); s != 1 {
		t.Fatalf("once with a missing server exited %d, want 1:\n%s", s, failed.stderr)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the failed record left a file (%v)", err)
	}
	p := start(t, append([]string{"replay", "--mode", "once", "-c", path, "--"}, peerCommand(testpeer.GoSDKLegacy)...)...)
	session(t, p, "go-sdk", "")
	p.stdin.Close()
	if s := p.wait(t); s != 0 {
		t.Fatalf("once exited %d:\n%s", s, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "recorded ") {
		t.Errorf("the second run did not record:\n%s", p.stderr)
	}
	loadRecorded(t, path)
}

// TestRecordForbidSaysOnce: when --forbid refuses every save, the error is
// printed once, the summary says nothing was saved, and an existing
// cassette is left as it was.
func TestRecordForbidSaysOnce(t *testing.T) {
	const plain = "plainvalue-in-the-handshake"
	path := tempCassette(t)
	if err := os.WriteFile(path, []byte(emptyCassette), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, append([]string{"record", "-c", path, "--forbid", plain, "--"}, peerCommand(testpeer.GoSDK)...)...)
	p.send(t, strings.Replace(initReq, `"name":"raw"`, `"name":"`+plain+`"`, 1))
	p.recv(t)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	p.recv(t)
	p.stdin.Close()
	if s := p.wait(t); s != 1 {
		t.Errorf("exit status %d, want 1", s)
	}
	stderr := p.stderr.String()
	if n := strings.Count(stderr, "forbidden value"); n != 1 {
		t.Errorf("the forbid error is printed %d times, want once:\n%s", n, stderr)
	}
	i := strings.Index(stderr, "recorded ")
	if i < 0 || !strings.Contains(stderr[i:], "nothing saved") || strings.Contains(stderr[i:], " to "+path+" (") {
		t.Errorf("the summary does not say that nothing was saved:\n%s", stderr)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, []byte(emptyCassette)) {
		t.Errorf("the cassette was changed: %q, %v", b, err)
	}
}
