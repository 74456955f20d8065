// Package stdio writes a process's standard output, the stdio transport's
// stream to its client, without making the writer wait.
//
// A replay server answers a request on the goroutine that read it. That
// goroutine must never block on a write: a client that writes a burst of
// requests before it reads an answer fills the pipe of answers, and a reader
// blocked on it would stop reading the client, which then blocks too. Out's
// TryWrite writes what the pipe or socket takes at once and returns; the
// caller hands the rest to a goroutine that may wait (Write).
package stdio
