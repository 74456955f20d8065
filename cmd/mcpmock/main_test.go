package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// beMain was the environment variable that made a re-executed test binary
// act as mcpmock. It is no longer how the binary is started (start and the
// scripts run the "mcpmock" command that testscript installs); a process
// that still sets it is refused, so that it cannot run every test again.
const beMain = "MCPMOCK_TEST_BE_MAIN"

// TestMain makes the test binary every program the tests start, so that
// they drive the real programs in processes of their own without building
// anything: mcpmock (the "mcpmock" command on $PATH, for start and for the
// scripts of script_test.go), the bundled weather server that the demo
// re-executes, the test servers of internal/testpeer (testpeer.Command, or
// the "testpeer KIND" command in scripts), and then the tests.
func TestMain(m *testing.M) {
	if os.Getenv(beMain) != "" {
		fmt.Fprintf(os.Stderr, "%s is no longer honoured: start mcpmock with start(t, ...), or with exec mcpmock in a script\n", beMain)
		os.Exit(2)
	}
	if len(os.Args) > 1 && (os.Args[1] == internalWeatherServer || os.Args[1] == connectCommand) {
		// The demo, run in this process, re-executes "itself" (the test
		// binary) as the weather server; mcpmock run gives stdio clients
		// "itself" with its hidden connect mode as the server to spawn.
		main()
	}
	testpeer.Main()
	testscript.Main(m, scriptCommands())
}

// syncBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads, which can wait for the next write (next). The zero value is an
// empty buffer.
type syncBuffer struct {
	mu sync.Mutex // guards b and changed
	b  bytes.Buffer
	// changed is closed by the next write; nil when nobody waits.
	changed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// next returns what the buffer holds and a channel closed by the next
// write.
func (s *syncBuffer) next() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.b.String(), s.changed
}

// proc is a running mcpmock.
type proc struct {
	cmd *exec.Cmd
	// stdin is mcpmock's stdin; closing it ends a stdio session.
	stdin io.WriteCloser
	// stdout is mcpmock's stdout and lines reads it by line (recv). Both
	// come from a pipe that os/exec does not know about, so that the end
	// of the process never closes it under a reader: the cleanup does.
	stdout io.ReadCloser
	lines  *bufio.Reader
	// stderr is everything mcpmock wrote to its stderr so far: copied by
	// the proc's own goroutine from a pipe that os/exec does not know
	// about, so that Wait, which closes the pipes it made, never cuts the
	// copy short. stderrDone is closed when the copy has reached the end
	// of the pipe (mcpmock, and whatever it started that held its stderr,
	// are gone).
	stderr     *syncBuffer
	stderrDone chan struct{}
	// exited is closed when the process has exited, by the one goroutine
	// that waits for it; waitErr is then what cmd.Wait returned. Tests
	// wait with wait, never with cmd.Wait.
	exited  chan struct{}
	waitErr error
}

// start runs mcpmock with args in its own process. The test reads its
// stdout (recv), writes its stdin (send), watches its stderr (stderr,
// listening) and waits for it (wait); the cleanup kills it.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startWith(t, nil, args...)
}

// startWith is start with a setup that changes the command before it starts
// (its session, its controlling terminal, extra files). It is the one way
// the tests start mcpmock: the "mcpmock" command that testscript.Main put on
// $PATH (TestMain), which is this test binary.
func startWith(t *testing.T, setup func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	path, err := exec.LookPath("mcpmock")
	if err != nil {
		t.Fatalf("the mcpmock command of TestMain: %v", err)
	}
	cmd := exec.Command(path, args...)
	if setup != nil {
		setup(cmd)
	}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, stderrDone: make(chan struct{}), exited: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		t.Fatal(err)
	}
	// *os.Files: the child gets them as they are, no copy by os/exec.
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		t.Fatal(err)
	}
	p.stdout, p.lines = outR, bufio.NewReader(outR)
	go func() {
		defer close(p.stderrDone)
		io.Copy(p.stderr, errR)
	}()
	go func() {
		defer close(p.exited)
		p.waitErr = cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		select {
		case <-p.stderrDone:
		case <-time.After(10 * time.Second):
			// A process that mcpmock started still holds the pipe.
		}
		errR.Close() // ends the copy if it still runs
		<-p.stderrDone
		outR.Close() // ends a recv that still waits
		if t.Failed() {
			t.Logf("mcpmock %s stderr:\n%s", strings.Join(args, " "), p.stderr)
		}
	})
	return p
}

// startListening runs mcpmock with args (which hold --listen) in its own
// process and returns it with the URL of the line "mcpmock: listening on
// URL" once it is printed.
func startListening(t *testing.T, args ...string) (*proc, string) {
	t.Helper()
	p := start(t, args...)
	return p, p.listening(t)
}

var listeningLine = regexp.MustCompile(`(?m)^mcpmock: listening on (http://127\.0\.0\.1:\d+/mcp)$`)

// listening waits for the line "mcpmock: listening on URL" on stderr and
// returns the URL; it fails the test if mcpmock ends first, or after 20
// seconds.
func (p *proc) listening(t *testing.T) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		s, changed := p.stderr.next()
		if m := listeningLine.FindStringSubmatch(s); m != nil {
			return m[1]
		}
		select {
		case <-changed:
		case <-p.stderrDone:
			if m := listeningLine.FindStringSubmatch(p.stderr.String()); m != nil {
				return m[1]
			}
			t.Fatalf("mcpmock exited without the URL line; stderr:\n%s", p.stderr)
		case <-timeout:
			t.Fatalf("no URL line within 20s; stderr:\n%s", p.stderr)
		}
	}
}

// peerCommand is the command line of a test server of the given kind, for
// after "--": the test binary, with the environment that makes it a server.
func peerCommand(kind string) []string {
	argv, env := testpeer.Command(kind)
	return append(append([]string{"env"}, env...), argv...)
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

// wait waits for the process to exit and returns its status; all of its
// stderr is then in p.stderr. It fails the test when mcpmock has not exited
// within a minute, or its stderr is still open a minute later.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	timeout := time.After(time.Minute)
	select {
	case <-p.exited:
	case <-timeout:
		t.Fatalf("mcpmock did not exit within a minute; stderr:\n%s", p.stderr)
	}
	select {
	case <-p.stderrDone:
	case <-timeout:
		t.Fatalf("mcpmock exited, but its stderr was still open a minute later; stderr:\n%s", p.stderr)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(p.waitErr, &ee):
		return ee.ExitCode()
	case p.waitErr != nil:
		t.Fatalf("wait: %v", p.waitErr)
	}
	return 0
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

// TestStartOutputOutlivesWait: what mcpmock wrote before it exited can be
// read after wait, and wait and the cleanup both wait for the one process
// without racing (os/exec's StdoutPipe is closed by Wait, which lost the
// last answers of a test that waited first).
func TestStartOutputOutlivesWait(t *testing.T) {
	path := tempCassette(t)
	const cassette = `{"version": 1, "interactions": [
  {"from": "client", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
   "response": {"from": "server", "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}}}}]}`
	if err := os.WriteFile(path, []byte(cassette), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, "replay", "--quiet", "-c", path)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	p.stdin.Close()
	if status := p.wait(t); status != 0 {
		t.Fatalf("replay exited with status %d", status)
	}
	if got := p.recv(t); got["result"] == nil {
		t.Errorf("answer after wait = %v, want the recorded result", got)
	}
	if !strings.Contains(p.stderr.String(), "replayed 1 messages, 1 matched") {
		t.Errorf("stderr after wait = %q, want the summary", p.stderr)
	}
}
