// Package proc holds what the opt-in harnesses (go run ./conformance,
// go run ./fidelity) do alike: run a command to its end, start and stop a
// background process, start mcpmock with --listen and read its URL, find a
// free loopback port, wait until an address listens.
package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// Command runs a command to its end, its output appended to out/logName.
func Command(ctx context.Context, out, logName, name string, args ...string) error {
	log, err := os.OpenFile(filepath.Join(out, logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = out
	if name == "go" {
		cmd.Dir = "" // the module root
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd.Run()
}

// A Proc is a process started in the background; Stop ends it.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts name with env added to the environment, its output going to
// the file logPath.
func Start(logPath string, env []string, name string, args ...string) (*Proc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

// Stop sends SIGTERM (mcpmock then saves its cassette and exits), and
// SIGKILL if the process has not exited ten seconds later.
func (p *Proc) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		fmt.Fprintf(os.Stderr, "%s did not exit 10s after SIGTERM; killing it\n", p.cmd.Path)
		p.cmd.Process.Kill()
		<-p.done
	}
}

var listening = regexp.MustCompile(`mcpmock: listening on (http://\S+/mcp)`)

// StartMCPMock starts mcpmock with a --listen flag and returns the URL of
// its "listening on" line; its stderr goes to the file logPath.
func StartMCPMock(ctx context.Context, logPath, bin string, args ...string) (*Proc, string, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Close()
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, "", err
	}
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		io.Copy(log, stderr)
		cmd.Wait()
		log.Close()
		close(p.done)
	}()
	select {
	case url := <-urls:
		return p, url, nil
	case <-p.done:
		return nil, "", fmt.Errorf("mcpmock %s exited before listening (see %s)", args[0], logPath)
	case <-ctx.Done():
		p.Stop()
		return nil, "", ctx.Err()
	case <-time.After(30 * time.Second):
		p.Stop()
		return nil, "", fmt.Errorf("mcpmock %s printed no URL within 30s (see %s)", args[0], logPath)
	}
}

// FreeAddr returns a loopback address with a port that was free a moment ago
// (for a server that takes a port, not a listener).
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// WaitDial waits until addr accepts a TCP connection.
func WaitDial(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
