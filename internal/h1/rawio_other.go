//go:build !linux

package h1

import (
	"io"
	"net"
)

// newRawIO is nil but on Linux: c's own Read and Write serve.
func newRawIO(c net.Conn) io.ReadWriter { return nil }
