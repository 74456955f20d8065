package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestLiveLogColoredOnATerminal: the live log is coloured when stderr is
// a terminal (as cassette show is on one), not with NO_COLOR, and never
// when stderr is a file or a pipe (every other test reads it plain).
func TestLiveLogColoredOnATerminal(t *testing.T) {
	path, err := exec.LookPath("mcpmock")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env   string
		color bool
	}{{"", true}, {"NO_COLOR=1", false}} {
		t.Run(tc.env, func(t *testing.T) {
			master, slave := openPTY(t)
			cmd := exec.Command(path, "replay", "-c", weatherCassette)
			cmd.Env = os.Environ()
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			cmd.Stdin = strings.NewReader(initReq + "\n")
			cmd.Stderr = slave
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 16)
			go func() {
				r := bufio.NewReader(master)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						close(lines)
						return
					}
					lines <- l
				}
			}()
			var got string
			timeout := time.After(20 * time.Second)
		read:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						break read
					}
					got += l
					if strings.Contains(l, "initialize") {
						break read
					}
				case <-timeout:
					break read
				}
			}
			cmd.Wait()
			if colored := strings.Contains(got, "\x1b[36mmcpmock: → 1 initialize"); colored != tc.color {
				t.Errorf("coloured %v, want %v:\n%q", colored, tc.color, got)
			}
		})
	}
}
