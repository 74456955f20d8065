//go:build !linux

package recorder

import "os"

// blockingPipe returns a pipe for the server's stdin or stdout. Only Linux
// has pipe2 to make it blocking and close-on-exec in one step; elsewhere
// it is an ordinary pipe, read through the runtime's poller.
func blockingPipe() (r, w *os.File, err error) {
	return os.Pipe()
}
