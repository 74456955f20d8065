//go:build unix

package recorder

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// TestStdioServerExitsBeforeItsChild runs the stdio tap in-process, with a
// stderr that is not a file, on a server that exits after one request
// while a child of it keeps its stdout and its stderr open: the tap
// answers the request with -32603 and returns the server's status without
// waiting for the child (exec's copy of stderr would wait for it too).
func TestStdioServerExitsBeforeItsChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	rec, err := New("", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	clientR, clientW := io.Pipe()
	t.Cleanup(func() { clientW.Close() })
	var out, stderr bytes.Buffer
	go io.WriteString(clientW, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n")
	argv := []string{"sh", "-c", `sleep 30 & echo $! >"$1"; read line; exit 3`, "sh", pidFile}
	done := make(chan struct{})
	var status int
	go func() {
		defer close(done)
		status, err = Stdio(testCtx(t), argv, clientR, &out, &stderr, rec, nil)
	}()
	// The child lives 30 s; a tap that waits for it is a tap that fails.
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tap still runs after 10 s: it waits for the server's child")
	}
	if err != nil || status != 3 {
		t.Fatalf("Stdio = %d, %v; want the server's status 3", status, err)
	}
	msg, err := jsonrpc.Parse(bytes.TrimSpace(out.Bytes()))
	if err != nil || msg.ID != "7" || msg.Error == nil || msg.Error.Code != jsonrpc.CodeInternalError {
		t.Errorf("the client got %q, want a -32603 answer to id 7", out.String())
	}
}
