package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// openPTY opens a pseudo-terminal pair with the Linux ioctls (no
// dependency): the master for the test, the slave for mcpmock.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("TIOCSPTLCK: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("TIOCGPTN: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// guardPairings are the pairings of transports that the guard's terminal
// tests run on: the stdio tap, and the two bridges.
var guardPairings = []string{"stdio", "stdio-to-http", "http-to-stdio"}

// startGuardPTY runs mcpmock record with the guard flags between a client
// of lib and a go-sdk test server, paired as pairing says (guardPairings),
// with a pseudo-terminal as its controlling terminal (/dev/tty); it returns
// the client, the terminal's master side, and a function that closes the
// client and waits for mcpmock to end.
func startGuardPTY(t *testing.T, pairing, lib string, flags ...string) (toolClient, *os.File, func()) {
	t.Helper()
	master, slave := openPTY(t)
	args := append([]string{"record", "-c", filepath.Join(t.TempDir(), "c.json")}, flags...)
	switch pairing {
	case "stdio-to-http":
		args = append(args, "--upstream", httpUpstream(t, testpeer.GoSDK, testpeer.HTTPServerOptions{})+"/mcp")
	case "http-to-stdio":
		args = append(append(args, "--listen", "127.0.0.1:0", "--"), peerCommand(testpeer.GoSDK)...)
	default:
		args = append(append(args, "--"), peerCommand(testpeer.GoSDK)...)
	}
	p := startGuard(t, func(cmd *exec.Cmd) {
		cmd.ExtraFiles = []*os.File{slave} // fd 3
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	}, args...)
	slave.Close()
	if pairing != "http-to-stdio" {
		c := stdioClient(t, lib, p)
		return c, master, func() { c.close(); p.wait(t) }
	}
	waitLog(t, p.stderr, "mcpmock: listening on ")
	c := httpClient(t, lib, listeningLine.FindStringSubmatch(p.stderr.String())[1])
	return c, master, func() {
		c.close()
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t)
	}
}

// TestGuardConfirmPTY gives mcpmock a pseudo-terminal as its controlling
// terminal (/dev/tty) and answers its prompts as a person would, on the
// stdio tap and on both bridges: a declined call reaches the client as a
// tool error that says so, an allowed one goes to the server, a call held
// for the person does not stop the others, and a tool that --confirm does
// not match is not asked about.
func TestGuardConfirmPTY(t *testing.T) {
	for _, pairing := range guardPairings {
		for _, lib := range []string{"gosdk", "mcpgo"} {
			t.Run(pairing+"/"+lib, func(t *testing.T) {
				audit := filepath.Join(t.TempDir(), "audit.jsonl")
				c, master, end := startGuardPTY(t, pairing, lib, "--audit-file", audit, "--confirm", "echo")
				ctx := testContext(t)
				tty := bufio.NewReader(master)

				type answer struct {
					text  string
					isErr bool
					err   error
				}
				ask := func(reply string) (answer, string) {
					done := make(chan answer, 1)
					go func() {
						text, isErr, _, err := c.call(ctx, "echo", map[string]any{"text": "hello"})
						done <- answer{text, isErr, err}
					}()
					prompt := readUntil(t, tty, "[y/N] ")
					// The held call does not stop the others.
					if text, isErr, _, err := c.call(ctx, "add", map[string]any{"a": 1, "b": 1}); err != nil || isErr || text != "2" {
						t.Errorf("add while echo is held = %q, %v, %v", text, isErr, err)
					}
					if _, err := master.WriteString(reply + "\n"); err != nil {
						t.Fatal(err)
					}
					return <-done, prompt
				}
				a, prompt := ask("n")
				if !strings.Contains(prompt, `call tool "echo"`) || !strings.Contains(prompt, `"text": "hello"`) {
					t.Errorf("the prompt does not show the tool and its arguments:\n%s", prompt)
				}
				if a.err != nil || !a.isErr || !strings.Contains(a.text, "declined at the terminal") {
					t.Errorf("declined call = %+v, want a tool error saying it was declined", a)
				}
				a, _ = ask("y")
				if a.err != nil || a.isErr || a.text != "hello" {
					t.Errorf("allowed call = %+v, want the server's answer hello", a)
				}
				// A tool that --confirm does not match is not asked about.
				if text, isErr, _, err := c.call(ctx, "add", map[string]any{"a": 1, "b": 1}); err != nil || isErr || text != "2" {
					t.Errorf("add = %q, %v, %v", text, isErr, err)
				}
				end()
				got, recs := readAudit(t, audit)
				want := []string{"add allow", "echo deny", "add allow", "echo allow", "add allow"}
				if strings.Join(got, ",") != strings.Join(want, ",") || recs[1].By != "person" || recs[3].By != "person" {
					t.Errorf("audit = %v (%+v), want %v decided by the person", got, recs, want)
				}
			})
		}
	}
}

// TestGuardConfirmTimeoutPTY: a question on the terminal that no one
// answers within --confirm-timeout denies the call with a tool error that
// says the confirmation timed out, and an audit line decided by "timeout",
// on the stdio tap and on both bridges.
func TestGuardConfirmTimeoutPTY(t *testing.T) {
	for _, pairing := range guardPairings {
		for _, lib := range []string{"gosdk", "mcpgo"} {
			t.Run(pairing+"/"+lib, func(t *testing.T) {
				audit := filepath.Join(t.TempDir(), "audit.jsonl")
				c, master, end := startGuardPTY(t, pairing, lib, "--audit-file", audit, "--confirm", "echo", "--confirm-timeout", "300ms")
				tty := bufio.NewReader(master)
				text, isErr, _, err := c.call(testContext(t), "echo", map[string]any{"text": "hello"})
				if err != nil || !isErr || !strings.Contains(text, "confirmation of the call to tool \"echo\" timed out") {
					t.Errorf("unanswered call = %q, isError %v, %v; want a tool error saying the confirmation timed out", text, isErr, err)
				}
				readUntil(t, tty, "no answer in time (--confirm-timeout): denied")
				end()
				got, recs := readAudit(t, audit)
				if len(recs) != 1 || got[0] != "echo deny" || recs[0].By != "timeout" {
					t.Errorf("audit = %v (%+v), want one denial of echo decided by timeout", got, recs)
				}
			})
		}
	}
}
