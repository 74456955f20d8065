package cassettes

import (
	"bytes"
	"fmt"
)

// ImportLines reads a line log: one JSON-RPC message (or batch) a line,
// "> " before a message the client sent and "< " before one the server
// sent, in the order they passed. Blank lines and lines that start with
// "#" are skipped. A line with another prefix is an error naming it; a
// message that is not JSON-RPC is kept as raw text with a warning, as the
// recorder keeps it. The log has no times (every offset is 0) and no
// transport: it imports as stdio.
func ImportLines(name string, data []byte) (*Capture, error) {
	cp := &Capture{Format: "lines", Meta: Meta{Transport: "stdio"}}
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		where := fmt.Sprintf("line %d", n)
		var from Direction
		switch {
		case bytes.HasPrefix(line, []byte("> ")):
			from = FromClient
		case bytes.HasPrefix(line, []byte("< ")):
			from = FromServer
		default:
			return nil, &importError{name: name, where: where, msg: fmt.Sprintf("want \"> \" (from the client) or \"< \" (from the server) before the message, not %s", quoteStart(line))}
		}
		msg := bytes.TrimSpace(line[2:])
		if len(msg) == 0 {
			return nil, &importError{name: name, where: where, msg: "no message after the prefix"}
		}
		cp.keepMessage(where, CaptureEvent{From: from, Data: bytes.Clone(msg)})
	}
	if len(cp.Events) == 0 {
		return nil, &importError{name: name, msg: "no messages"}
	}
	return cp, nil
}

// quoteStart quotes the start of a line for an error.
func quoteStart(line []byte) string {
	const max = 20
	if len(line) > max {
		return fmt.Sprintf("%q...", line[:max])
	}
	return fmt.Sprintf("%q", line)
}
