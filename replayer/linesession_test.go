package replayer_test

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/replayer"
)

// lineSession is one stdio session of an engine over in-memory pipes, for
// tests that speak JSON-RPC lines to it.
type lineSession struct {
	t     *testing.T
	w     io.WriteCloser
	lines *bufio.Scanner
}

// serveLines starts a session of e; it ends with the test.
func serveLines(t *testing.T, e *replayer.Engine) *lineSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- e.Serve(t.Context(), sr, sw); sw.Close() }()
	t.Cleanup(func() {
		cw.Close()
		if err := <-done; err != nil {
			t.Errorf("the replay session ended with %v", err)
		}
	})
	lines := bufio.NewScanner(cr)
	lines.Buffer(nil, 1<<20)
	return &lineSession{t: t, w: cw, lines: lines}
}

// call sends a request line and returns every line the replay sent up to
// and including its answer, one message a line.
func (l *lineSession) call(line string) string {
	l.t.Helper()
	req, err := jsonrpc.Parse([]byte(line))
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := io.WriteString(l.w, line+"\n"); err != nil {
		l.t.Fatal(err)
	}
	var out []string
	for l.lines.Scan() {
		out = append(out, l.lines.Text())
		if m, err := jsonrpc.Parse(l.lines.Bytes()); err == nil && m.Kind() == jsonrpc.KindResponse && m.ID == req.ID {
			return strings.Join(out, "\n")
		}
	}
	l.t.Fatalf("the replay ended before answering %s (after %q): %v", line, out, l.lines.Err())
	return ""
}
