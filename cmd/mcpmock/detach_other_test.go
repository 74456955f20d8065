//go:build !unix

package main

import "os/exec"

// detach does nothing where there are no sessions (Windows).
func detach(cmd *exec.Cmd) {}
