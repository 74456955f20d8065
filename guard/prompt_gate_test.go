package guard

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/internal/livelog"
)

// screen is a terminal: what is written to it, in order, and what is typed.
type screen struct {
	mu  sync.Mutex
	out bytes.Buffer
	in  *io.PipeReader
}

func (s *screen) Read(p []byte) (int, error) { return s.in.Read(p) }
func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}
func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// TestPromptHoldsTheLiveLog: a line of the live log written while the
// guard asks a person waits for the answer instead of landing on the
// prompt (issue 21: live-log lines were printed onto "Allow this call?").
func TestPromptHoldsTheLiveLog(t *testing.T) {
	in, typed := io.Pipe()
	scr := &screen{in: in}
	gate := livelog.NewGate(scr)
	term := NewTerminal(scr)
	term.Pause = gate
	answer := make(chan bool, 1)
	go func() {
		ok, _ := term.Confirm(context.Background(), Call{Tool: "delete_file", Arguments: []byte(`{"path":"/"}`), Hints: "destructive"})
		answer <- ok
	}()
	for !strings.Contains(scr.String(), "[y/N] ") {
		time.Sleep(time.Millisecond)
	}
	io.WriteString(gate, "mcpmock: ← 7 result {} (1ms)\n")
	if strings.Contains(scr.String(), "← 7 result") {
		t.Fatalf("the log line landed on the open prompt:\n%q", scr.String())
	}
	io.WriteString(typed, "y\n")
	if !<-answer {
		t.Fatal("the call was not allowed")
	}
	got := scr.String()
	if i, j := strings.Index(got, "mcpmock guard: allowed"), strings.Index(got, "← 7 result"); i < 0 || j < i {
		t.Errorf("the held log line does not follow the answer:\n%q", got)
	}
	io.WriteString(gate, "after\n")
	if !strings.HasSuffix(scr.String(), "after\n") {
		t.Errorf("the gate does not pass lines once the question is answered:\n%q", scr.String())
	}
}
