package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestPinConfirmPTY: with --confirm pin and a pseudo-terminal as mcpmock's
// controlling terminal, the person sees how echo's definition differs
// from its pin (a line diff of the description) and decides once: yes
// shows echo to the client, lets its calls through and updates the pin;
// no keeps it hidden and its calls refused, the pin unchanged. The next
// listing asks nothing. On every tap pairing, go-sdk (2026-07-28) and
// mcp-go (2025-06-18) peers.
func TestPinConfirmPTY(t *testing.T) {
	for _, pairing := range pinPairings {
		for _, lib := range []string{"gosdk", "mcpgo"} {
			for _, answer := range []string{"y", "n"} {
				t.Run(pairing+"/"+lib+"/"+answer, func(t *testing.T) {
					t.Parallel()
					dir := t.TempDir()
					pin := filepath.Join(dir, "server.pin")
					audit := filepath.Join(dir, "audit.jsonl")
					c, _, end := startPin(t, pairing, lib, lib, echoTrusted, nil, "--pin", pin)
					listAndCall(t, c)
					end()
					first := readPin(t, pin)

					master, slave := openPTY(t)
					setup := func(cmd *exec.Cmd) {
						cmd.ExtraFiles = []*os.File{slave} // fd 3
						cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
					}
					c, _, end = startPin(t, pairing, lib, lib, echoPulled, setup,
						"--pin", pin, "--confirm", "pin", "--confirm-timeout", "20s", "--audit-file", audit)
					slave.Close()
					tty := bufio.NewReader(master)
					ctx := testContext(t)
					type listed struct {
						names []string
						err   error
					}
					done := make(chan listed, 1)
					go func() {
						names, err := c.list(ctx)
						done <- listed{names, err}
					}()
					prompt := readUntil(t, tty, "[y/N] ")
					for _, want := range []string{`tool "echo": its description changed since it was pinned in ` + pin,
						"description:", "- " + echoTrusted, "+ " + echoPulled, "pinned sha256:", "pin it in " + pin} {
						if !strings.Contains(prompt, want) {
							t.Errorf("the question lacks %q:\n%s", want, prompt)
						}
					}
					if _, err := master.WriteString(answer + "\n"); err != nil {
						t.Fatal(err)
					}
					l := <-done
					if l.err != nil {
						t.Fatalf("tools/list: %v", l.err)
					}
					yes := answer == "y"
					if slices.Contains(l.names, "echo") != yes || !slices.Contains(l.names, "add") {
						t.Errorf("answer %s: the client listed %v", answer, l.names)
					}
					// Decided once: the next listing is not held.
					if names, err := c.list(ctx); err != nil || slices.Contains(names, "echo") != yes {
						t.Errorf("answer %s: the next listing = %v, %v", answer, names, err)
					}
					text, isErr, _, err := c.call(ctx, "echo", map[string]any{"text": "hello"})
					if err != nil || isErr == yes || (yes && text != "hello") || (!yes && !strings.Contains(text, "a person declined the change")) {
						t.Errorf("answer %s: echo = %q (isError %v), %v", answer, text, isErr, err)
					}
					end()
					now := readPin(t, pin)
					if (now["echo"] != first["echo"]) != yes {
						t.Errorf("answer %s: echo pinned as %s, first %s", answer, now["echo"], first["echo"])
					}
					got, recs := readAudit(t, audit)
					want := map[string][]string{"y": {"echo pinned", "echo allow"}, "n": {"echo pin-blocked", "echo deny"}}[answer]
					if !slices.Equal(got, want) || recs[0].By != "person" || recs[0].Fingerprint != now["echo"] && yes {
						t.Errorf("audit = %v (%+v), want %v decided by the person", got, recs, want)
					}
				})
			}
		}
	}
}
