// Command relay is the floor of any stdio tap: a bare byte relay in its own
// process that spawns the server and copies bytes both ways through its own
// pipes, nothing else.
//
//	relay COMMAND [ARG...]
package main

import (
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(1)
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	cmd.Wait()
}
