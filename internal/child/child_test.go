//go:build unix

package child

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childModeEnv, when set, makes the test binary act as a child server of
// the kind it names (see runChild).
const childModeEnv = "MCPMOCK_CHILD_TEST_MODE"

// Exit codes of the test children, so a test can tell what ended them.
const (
	exitOnEOF  = 3  // the child saw the end of its stdin
	exitOnTerm = 42 // the child caught SIGTERM
	exitEarly  = 5  // the child exited on its own
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		runChild(mode)
		return
	}
	os.Exit(m.Run())
}

// runChild is the test binary as a child. Every mode but "early" writes
// "ready" once its signal handling is set, then echoes its stdin's lines.
func runChild(mode string) {
	if mode == "early" {
		os.Exit(exitEarly)
	}
	terms := make(chan os.Signal, 1)
	switch mode {
	case "ignore-eof":
		signal.Notify(terms, syscall.SIGTERM)
		go func() {
			<-terms
			os.Exit(exitOnTerm)
		}()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println("echo " + sc.Text())
	}
	if mode == "eof" {
		os.Exit(exitOnEOF)
	}
	// Ignore the end of stdin: wait for SIGTERM (ignore-eof) or for a
	// SIGHUP that never comes (ignore-term: only SIGKILL ends it).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	select {}
}

// startChild starts the test binary as a child in mode and waits for its
// "ready" line.
func startChild(t *testing.T, mode string, o *Options) (*Process, *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if o == nil {
		o = &Options{}
	}
	o.Env = append(o.Env, childModeEnv+"="+mode)
	p, err := Start([]string{exe, "-test.run=^$"}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.Wait()
		p.Stdout().Close()
	})
	out := bufio.NewReader(p.Stdout())
	if mode != "early" {
		if line, err := out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child's first line = %q, %v; want ready", line, err)
		}
	}
	return p, out
}

// long is a grace that a test never waits out: a child that should have
// exited for another reason and did not makes the test time out.
const long = time.Hour

func TestStopSequence(t *testing.T) {
	tests := []struct {
		name, mode            string
		stdinGrace, termGrace time.Duration
		want                  int
	}{
		{"exits at the end of stdin", "eof", long, long, exitOnEOF},
		{"ignores the end of stdin, exits on SIGTERM", "ignore-eof", time.Millisecond, long, exitOnTerm},
		{"ignores SIGTERM, killed", "ignore-term", time.Millisecond, time.Millisecond, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, out := startChild(t, tt.mode, &Options{StdinGrace: tt.stdinGrace, TermGrace: tt.termGrace})
			if _, err := io.WriteString(p.Stdin(), "hello\n"); err != nil {
				t.Fatal(err)
			}
			if line, _ := out.ReadString('\n'); line != "echo hello\n" {
				t.Fatalf("child answered %q, want echo hello", line)
			}
			status, err := p.Close()
			if err != nil || status != tt.want {
				t.Errorf("Close() = %d, %v; want %d, nil", status, err, tt.want)
			}
		})
	}
}

func TestTerminateSendsSIGTERMAtOnce(t *testing.T) {
	p, _ := startChild(t, "ignore-eof", &Options{StdinGrace: long, TermGrace: long})
	p.Terminate()
	if status, err := p.Wait(); err != nil || status != exitOnTerm {
		t.Errorf("Wait() = %d, %v; want %d (SIGTERM caught)", status, err, exitOnTerm)
	}
}

func TestTerminateHastensStop(t *testing.T) {
	p, _ := startChild(t, "ignore-eof", &Options{StdinGrace: long, TermGrace: long})
	p.Stop()
	p.Terminate()
	if status, err := p.Wait(); err != nil || status != exitOnTerm {
		t.Errorf("Wait() = %d, %v; want %d (SIGTERM caught)", status, err, exitOnTerm)
	}
}

// TestExitNoticed: a child that exits on its own, before its stdin is
// closed, is noticed (Done), and Wait and Close say its status to every
// caller.
func TestExitNoticed(t *testing.T) {
	p, _ := startChild(t, "early", &Options{StdinGrace: long, TermGrace: long})
	<-p.Done()
	var wg sync.WaitGroup
	got := make([]int, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				got[i], _ = p.Wait()
			} else {
				got[i], _ = p.Close()
			}
		}()
	}
	wg.Wait()
	for i, s := range got {
		if s != exitEarly {
			t.Errorf("call %d returned status %d, want %d", i, s, exitEarly)
		}
	}
	if _, err := p.Stdin().Write([]byte("x\n")); err == nil {
		t.Error("stdin still writable after Close")
	}
}

// TestCloseIdempotent: Close from several goroutines at once stops the
// child once and returns the same to each.
func TestCloseIdempotent(t *testing.T) {
	p, _ := startChild(t, "eof", &Options{StdinGrace: long, TermGrace: long})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, err := p.Close(); err != nil || status != exitOnEOF {
				t.Errorf("Close() = %d, %v; want %d, nil", status, err, exitOnEOF)
			}
		}()
	}
	wg.Wait()
	if status, err := p.Close(); err != nil || status != exitOnEOF {
		t.Errorf("Close() again = %d, %v; want %d, nil", status, err, exitOnEOF)
	}
}

func TestStartError(t *testing.T) {
	tests := []struct {
		name      string
		argv      []string
		o         *Options
		want      []string
		wantNotIn string
	}{
		{"no command", nil, nil, []string{"no server command"}, ""},
		{"missing program", []string{"mcpmock-no-such-server"}, nil, []string{`start server "mcpmock-no-such-server"`, "not found"}, ""},
		{"shown name", []string{"TOKEN=s3cret"}, &Options{Name: "TOKEN=[REDACTED]"}, []string{`"TOKEN=[REDACTED]"`}, "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(tt.argv, tt.o)
			if err == nil {
				p.cmd.Process.Kill()
				p.Wait()
				t.Fatal("Start succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.wantNotIn != "" && strings.Contains(err.Error(), tt.wantNotIn) {
				t.Errorf("error %q shows %q", err, tt.wantNotIn)
			}
		})
	}
}

// TestStderrAndEnv: the child's stderr goes to Options.Stderr, and
// Options.Env is added to its environment.
func TestStderrAndEnv(t *testing.T) {
	var errBuf strings.Builder
	p, err := Start([]string{"sh", "-c", `echo "to stderr $EXTRA" >&2`}, &Options{Env: []string{"EXTRA=yes"}, Stderr: &errBuf})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout().Close()
	if status, err := p.Close(); err != nil || status != 0 {
		t.Fatalf("Close() = %d, %v", status, err)
	}
	if got := errBuf.String(); got != "to stderr yes\n" {
		t.Errorf("stderr = %q", got)
	}
}

// TestExitNoticedWhileStdoutHeld: the exit of the child itself is noticed
// while a descendant keeps its stdout open (a wrapper such as sh -c or npx
// leaves it so); what the child wrote is still read, then Stdout stops
// waiting (os.ErrDeadlineExceeded) instead of waiting for the descendant.
func TestExitNoticedWhileStdoutHeld(t *testing.T) {
	// cat holds stdout until its stdin, the child's, is closed.
	p, err := Start([]string{"sh", "-c", "exec 3<&0; cat <&3 3<&- & echo bye; exit 4"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout().Close()
	<-p.Done()
	out, err := io.ReadAll(p.Stdout())
	if string(out) != "bye\n" || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read %q, %v; want \"bye\\n\", os.ErrDeadlineExceeded", out, err)
	}
	if status, err := p.Close(); err != nil || status != 4 {
		t.Errorf("Close() = %d, %v; want 4, nil", status, err)
	}
}
