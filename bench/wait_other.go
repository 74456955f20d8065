//go:build !linux

package main

import "errors"

// waitExited is Linux's (wait_linux.go): the growth group needs /proc.
func waitExited(pid int) error {
	return errors.New("the growth group needs Linux")
}
