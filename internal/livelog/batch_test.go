package livelog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

// lockedBuffer is a buffer that a timer's goroutine may write to while a
// test reads it.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Writes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

// TestBatchedLines: a batched text log writes the lines of a call and its
// answer in one write, within lineDelay; a record of any handler (the exit
// summary, on stderr itself) writes every line that waits first; FlushAll
// writes them; a Gate's question waits for them.
func TestBatchedLines(t *testing.T) {
	call, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	answer, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`))
	want := "mcpmock: → 1 tools/call echo {\"text\":\"hi\"}\nmcpmock: ← 1 result \"hi\" (1ms)\n"

	t.Run("in one write", func(t *testing.T) {
		defer func(d time.Duration) { lineDelay = d }(lineDelay)
		lineDelay = time.Hour
		var out lockedBuffer
		l := slog.New(NewTextHandler(&out).Batched())
		Message(l, ToServer, call, 0, "")
		Message(l, ToClient, answer, time.Millisecond, "")
		if got := out.String(); got != "" {
			t.Fatalf("written before the batch's time: %q", got)
		}
		FlushAll()
		if got, n := out.String(), out.Writes(); got != want || n != 1 {
			t.Errorf("%d writes of %q, want 1 of %q", n, got, want)
		}
	})
	t.Run("in time", func(t *testing.T) {
		var out lockedBuffer
		start := time.Now()
		Message(slog.New(NewTextHandler(&out).Batched()), ToServer, call, 0, "")
		for out.String() == "" {
			if time.Since(start) > 10*time.Second {
				t.Fatal("the batch was never written")
			}
			time.Sleep(time.Millisecond)
		}
		if waited := time.Since(start); waited < lineDelay {
			t.Errorf("written after %v, sooner than lineDelay", waited)
		}
	})
	t.Run("before a record of another handler", func(t *testing.T) {
		var out lockedBuffer
		gate := NewGate(&out)
		live := slog.New(NewTextHandler(gate).Batched())
		summary := slog.New(NewTextHandler(&out))
		Message(live, ToServer, call, 0, "")
		Message(live, ToClient, answer, time.Millisecond, "")
		summary.Info("replayed 2 messages")
		if got := out.String(); got != want+"mcpmock: replayed 2 messages\n" {
			t.Errorf("got %q, want the lines, then the summary", got)
		}
	})
	t.Run("FlushAll", func(t *testing.T) {
		var out lockedBuffer
		Message(slog.New(NewTextHandler(&out).Batched()), ToServer, call, 0, "")
		FlushAll()
		if got := out.String(); !strings.HasPrefix(want, got) || got == "" {
			t.Errorf("after FlushAll: %q", got)
		}
	})
	t.Run("before a question", func(t *testing.T) {
		var out lockedBuffer
		gate := NewGate(&out)
		Message(slog.New(NewTextHandler(gate).Batched()), ToServer, call, 0, "")
		gate.Hold()
		defer gate.Release()
		if got := out.String(); !strings.HasPrefix(want, got) || got == "" {
			t.Errorf("when the gate is held: %q, want the line that waited", got)
		}
	})
	t.Run("unbatched", func(t *testing.T) {
		var out lockedBuffer
		Message(slog.New(NewTextHandler(&out)), ToServer, call, 0, "")
		if got := out.String(); !strings.HasPrefix(want, got) || got == "" {
			t.Errorf("an unbatched handler wrote %q", got)
		}
	})
}
