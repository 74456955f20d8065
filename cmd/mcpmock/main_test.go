package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// beMain makes the test binary act as the mcpmock command, so that tests
// drive the real program in its own process without building it.
const beMain = "MCPMOCK_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" || (len(os.Args) > 1 && os.Args[1] == internalWeatherServer) {
		// The demo re-executes "itself" (the test binary) as the weather server.
		os.Unsetenv(beMain)
		main()
	}
	testpeer.Main()
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for a process's writes and a test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running mcpmock.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *syncBuffer
	lines  *bufio.Reader
}

// start runs mcpmock with args in its own process.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), beMain+"=1")
	p := &proc{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	p.lines = bufio.NewReader(p.stdout)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("mcpmock %s stderr:\n%s", strings.Join(args, " "), p.stderr)
		}
	})
	return p
}

// peerCommand is the command line of a test server of the given kind, for
// after "--": the test binary, with the environment that makes it a server.
func peerCommand(kind string) []string {
	argv, env := testpeer.Command(kind)
	return append(append([]string{"env", "-u", beMain}, env...), argv...)
}

// send writes one line to mcpmock's stdin.
func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
}

// recv reads one line from mcpmock's stdout, failing after 10 seconds.
func (p *proc) recv(t *testing.T) map[string]any {
	t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		l, err := p.lines.ReadString('\n')
		ch <- result{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read from mcpmock: %v (got %q)", r.err, r.line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.line), &m); err != nil {
			t.Fatalf("mcpmock wrote a line that is not JSON: %q", r.line)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no line from mcpmock within 10s")
	}
	return nil
}

// wait waits for the process to exit and returns its status.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatalf("mcpmock did not exit within 20s; stderr:\n%s", p.stderr)
	}
	return -1
}

func errorCode(t *testing.T, m map[string]any) int {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error response, got %v", m)
	}
	return int(e["code"].(float64))
}

func tempCassette(t *testing.T) string {
	return filepath.Join(t.TempDir(), "session.json")
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
