//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach runs cmd in a session of its own, without a controlling terminal.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
