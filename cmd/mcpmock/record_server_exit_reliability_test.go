//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestRecordServerExitsBeforeItsStdout runs a server that exits (status 3)
// after reading one request, while a child of it keeps the stdout pipe open
// for 30 s, as the wrappers sh -c, npx and uvx can: the tap notices the
// server's own exit, answers the outstanding request with -32603 at once
// and exits with the server's status. (It once waited for the end of file,
// which came when the child exited, 30 s later.)
func TestRecordServerExitsBeforeItsStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	// The child keeps stdin and stdout, not stderr: the test's wait for
	// mcpmock would wait for it.
	script := `sleep 30 2>/dev/null & echo $! >"$1"; read line; exit 3`
	p := start(t, "record", "-c", filepath.Join(dir, "c.json"), "--", "sh", "-c", script, "sh", pidFile)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	began := time.Now()
	if code := errorCode(t, p.recv(t)); code != -32603 {
		t.Errorf("answer to the outstanding request: code %d, want -32603", code)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the answer took %v: the tap waited for the child, not for the server", took)
	}
	if status := p.wait(t); status != 3 {
		t.Errorf("mcpmock exited with status %d, want the server's 3", status)
	}
}

// TestRecordServerDiesMidLine runs a server that writes half a JSON line
// and exits: the client receives the half line, ended, then mcpmock's
// -32603 answer on a line of its own that parses; the cassette keeps the
// half line as raw text. (The answer was once glued to the half line.)
// The server answers a first ping in full: a record in which no
// interaction completed writes no cassette.
func TestRecordServerDiesMidLine(t *testing.T) {
	t.Parallel()
	const half = `{"jsonrpc":"2.0","id":1,"res`
	path := tempCassette(t)
	p := start(t, "record", "-c", path, "--", "sh", "-c", `read line; echo '{"jsonrpc":"2.0","id":0,"result":{}}'; read line; printf '%s' '`+half+`'; exit 2`)
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"ping"}`)
	if m := p.recv(t); m["id"] != float64(0) || m["result"] == nil {
		t.Fatalf("first answer = %v, want the result for id 0", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	deadline := time.AfterFunc(20*time.Second, func() { p.cmd.Process.Kill() })
	defer deadline.Stop()
	first, err := p.lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the half line: %v (got %q)", err, first)
	}
	if first != half+"\n" {
		t.Errorf("first line = %q, want the half line, ended: %q", first, half+"\n")
	}
	second, err := p.lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading mcpmock's answer: %v (got %q)", err, second)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(second), &m); err != nil {
		t.Fatalf("mcpmock's answer does not parse: %q: %v", second, err)
	}
	if code := errorCode(t, m); code != -32603 || m["id"] != float64(1) {
		t.Errorf("answer = %v, want a -32603 error for id 1", m)
	}
	p.stdin.Close()
	if status := p.wait(t); status != 2 {
		t.Errorf("mcpmock exited with status %d, want the server's 2", status)
	}
	c, err := cassettes.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	for _, in := range c.Interactions {
		if in.Raw != nil {
			raws = append(raws, *in.Raw)
		}
		for _, m := range in.Exchange {
			if m.Raw != nil {
				raws = append(raws, *m.Raw)
			}
		}
	}
	if len(raws) != 1 || raws[0] != half {
		t.Errorf("raw text in the cassette = %q, want the half line %q", raws, half)
	}
}
