// Package child is the one lifecycle of an MCP server that mcpmock runs as a
// child process (the stdio tap, the stdio bridge, the new-episodes upstream,
// cassette verify): start it with pipes to its stdin and stdout, notice when
// the process itself exits, and stop it as the MCP stdio transport says a
// client should: close its stdin, then SIGTERM after StdinGrace, then SIGKILL
// after TermGrace.
//
//	p, err := child.Start([]string{"my-server", "--flag"}, &child.Options{Stderr: os.Stderr})
//	if err != nil {
//		return err // names the command
//	}
//	// write requests to p.Stdin(), read lines from p.Stdout()
//	status, err := p.Close() // stdin closed, SIGTERM, SIGKILL, as needed
package child

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StdinGrace is how long a child has to exit once its stdin is closed
// before it is sent SIGTERM (the MCP stdio transport's shutdown: a server
// exits at the end of its input).
const StdinGrace = 5 * time.Second

// TermGrace is how long a child has to exit after SIGTERM before it is
// killed with SIGKILL. On Windows, where there is no SIGTERM, the child is
// killed at once when StdinGrace has passed.
const TermGrace = 5 * time.Second

// StderrGrace is how long the copy of a child's stderr may go on once the
// child has exited, when Options.Stderr is not a file: a descendant that
// inherited the pipe and keeps it open does not keep Wait waiting longer.
const StderrGrace = time.Second

// ExitDrainGrace is how long a read of a child's stdout waits for data once
// the child process has exited: what it wrote before it exited is still
// read, however slowly the reader takes it, but a descendant that keeps the
// pipe open and silent does not keep the reader waiting (the read fails
// with os.ErrDeadlineExceeded).
const ExitDrainGrace = 200 * time.Millisecond

// Options configure a child. The zero value (or nil) is the default.
type Options struct {
	// Env is added to the child's environment (KEY=VALUE); nil means the
	// environment of mcpmock as it is.
	Env []string
	// Dir is the child's working directory; "" means the current one.
	Dir string
	// Stderr receives the child's stderr; nil discards it.
	Stderr io.Writer
	// Name is the command as errors show it; "" means argv[0]. A caller
	// that redacts secrets from a command line passes the redacted name.
	Name string
	// StdinGrace and TermGrace replace the constants of the same names;
	// 0 means the constant.
	StdinGrace, TermGrace time.Duration
}

// Process is a running child. Its methods are safe to call from several
// goroutines.
type Process struct {
	cmd                   *exec.Cmd
	stdin                 *os.File
	stdout                *output
	stdinGrace, termGrace time.Duration

	exited chan struct{} // closed when the process has exited
	done   chan struct{} // closed after exited, once the stopper has ended
	status int           // the exit status, set before done closes
	err    error         // an error of Wait other than an exit status, set before done closes

	stopOnce  sync.Once
	stop      chan struct{} // closed by Stop: begin the stop sequence
	termOnce  sync.Once
	term      chan struct{} // closed by Terminate: SIGTERM now
	stopperWG sync.WaitGroup
}

// Start starts argv with pipes to its stdin and stdout. The error of a
// command that cannot start says `start server "NAME": ` and why (the
// caller adds its own prefix); it wraps the error of os/exec when NAME is
// argv[0].
func Start(argv []string, opts *Options) (*Process, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(argv) == 0 {
		return nil, errors.New("no server command to start")
	}
	if o.Name == "" {
		o.Name = argv[0]
	}
	if o.StdinGrace <= 0 {
		o.StdinGrace = StdinGrace
	}
	if o.TermGrace <= 0 {
		o.TermGrace = TermGrace
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if o.Env != nil {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Dir = o.Dir
	cmd.Stderr = o.Stderr
	cmd.WaitDelay = StderrGrace
	// The parent's ends of the pipes are under the runtime's poller, as
	// cmd.StdinPipe and StdoutPipe would put them: a reader waiting for the
	// child's next line is parked, holding no thread in a system call, and
	// its reads can have deadlines.
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start server %q: %w", o.Name, err)
	}
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdin.Close()
		return nil, fmt.Errorf("start server %q: %w", o.Name, err)
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	err = cmd.Start()
	// The child has its ends now; the parent keeps only its own, so that
	// the child's exit is an end of file on stdout.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		if o.Name != argv[0] {
			return nil, fmt.Errorf("start server %q: %s", o.Name, strings.ReplaceAll(err.Error(), argv[0], o.Name))
		}
		return nil, fmt.Errorf("start server %q: %w", o.Name, err)
	}
	p := &Process{cmd: cmd, stdin: stdin, stdout: &output{f: stdout}, stdinGrace: o.StdinGrace, termGrace: o.TermGrace,
		exited: make(chan struct{}), done: make(chan struct{}), stop: make(chan struct{}), term: make(chan struct{})}
	p.stopperWG.Add(1)
	go p.stopper()
	go p.wait()
	return p, nil
}

// wait waits for the process and records its status.
func (p *Process) wait() {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		p.status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.status = 128 + int(ws.Signal())
		}
	case errors.Is(err, exec.ErrWaitDelay):
		// Exited with status 0; a descendant still holds its stderr.
	case err != nil:
		p.status, p.err = 1, fmt.Errorf("wait for server %q: %w", p.cmd.Path, err)
	}
	p.stdout.exit()
	close(p.exited)
	p.stopperWG.Wait()
	close(p.done)
}

// stopper carries out the stop sequence once Stop or Terminate asks for it,
// and ends when the process has exited.
func (p *Process) stopper() {
	defer p.stopperWG.Done()
	var timer <-chan time.Time
	stop, term := p.stop, p.term
	termed := false
	for {
		select {
		case <-p.exited:
			return
		case <-stop:
			stop = nil
			if !termed {
				timer = time.After(p.stdinGrace)
			}
		case <-term:
			term = nil
			termed = true
			p.terminate()
			timer = time.After(p.termGrace)
		case <-timer:
			if !termed {
				termed = true
				p.terminate()
				timer = time.After(p.termGrace)
				continue
			}
			p.cmd.Process.Kill()
			timer = nil
		}
	}
}

// terminate sends SIGTERM, or kills where there is none (Windows).
func (p *Process) terminate() {
	if runtime.GOOS == "windows" {
		p.cmd.Process.Kill()
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
}

// Stdin is the write end of the child's stdin. Stop closes it; a caller
// may close it earlier.
func (p *Process) Stdin() *os.File { return p.stdin }

// Stdout is the read end of the child's stdout. It reaches its end of file
// when the child and every descendant holding it have exited, or, once the
// child itself has exited, fails with os.ErrDeadlineExceeded when no data
// has come for ExitDrainGrace. The caller closes it when done reading.
func (p *Process) Stdout() io.ReadCloser { return p.stdout }

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the child (mcpmock passes on SIGINT and SIGTERM).
// It does nothing once the child has been waited for.
func (p *Process) Signal(sig os.Signal) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	return p.cmd.Process.Signal(sig)
}

// Done is closed when the child process itself has exited, which may be
// before its stdout ends (a wrapper such as sh -c or npx exits while a
// descendant keeps the pipe open).
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the child to exit and returns its exit status: the code it
// exited with, or 128 plus the number of the signal that ended it. The
// error is non-nil only if the process could not be waited for. Every call
// returns the same.
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.status, p.err
}

// Stop begins the stop sequence and returns at once: the child's stdin is
// closed, then it is sent SIGTERM if it has not exited within StdinGrace,
// then SIGKILL after TermGrace more. It is idempotent.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		close(p.stop)
	})
}

// Terminate sends SIGTERM now (where Stop would wait for StdinGrace first)
// and SIGKILL if the child has not exited within TermGrace; mcpmock does so
// when its own context ends. It is idempotent, and it hastens a Stop under
// way.
func (p *Process) Terminate() {
	p.termOnce.Do(func() { close(p.term) })
}

// Close stops the child (Stop) and waits for it (Wait). It is idempotent
// and safe from several goroutines: every call returns the same status.
func (p *Process) Close() (int, error) {
	p.Stop()
	return p.Wait()
}

// output reads a child's stdout; once the child has exited (exit), a read
// waits at most ExitDrainGrace for data.
type output struct {
	f      *os.File
	exited atomic.Bool
}

func (r *output) Read(p []byte) (int, error) {
	if r.exited.Load() {
		r.f.SetReadDeadline(time.Now().Add(ExitDrainGrace))
	}
	return r.f.Read(p)
}

func (r *output) Close() error { return r.f.Close() }

// exit says that the child process has exited.
func (r *output) exit() {
	r.exited.Store(true)
	r.f.SetReadDeadline(time.Now().Add(ExitDrainGrace))
}
