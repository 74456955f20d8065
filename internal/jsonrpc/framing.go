package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the default limit of one stdio message: 64 MiB.
const DefaultMaxLine = 64 << 20

// ErrLineTooLong is returned (wrapped in a *LineTooLongError) for a line past
// the reader's maximum.
var ErrLineTooLong = errors.New("jsonrpc: line too long")

// LineTooLongError says how long the refused line was and what the limit is.
type LineTooLongError struct {
	Len, Max int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("jsonrpc: line of %d bytes exceeds the limit of %d bytes (the line was skipped)", e.Len, e.Max)
}

func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// LineReader reads newline-delimited messages, as the stdio transport frames
// them, with no limit but Max (unlike bufio.Scanner's 64 KiB).
type LineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// NewLineReader returns a reader of lines of at most max bytes; max <= 0
// means DefaultMaxLine.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// ReadLine returns the next line without its line ending ("\n" or "\r\n").
// Blank lines are skipped. A last line without a newline is returned before
// io.EOF. A line past the maximum is consumed and skipped, and ReadLine
// returns a *LineTooLongError; the reader can go on with the next line. The
// returned slice is valid until the next call.
func (lr *LineReader) ReadLine() ([]byte, error) {
	for {
		line, err := lr.readRaw()
		if err != nil && len(line) == 0 {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		return line, nil
	}
}

// readRaw returns one line with its newline, or a *LineTooLongError.
func (lr *LineReader) readRaw() ([]byte, error) {
	lr.buf = lr.buf[:0]
	total := 0
	for {
		chunk, err := lr.br.ReadSlice('\n')
		total += len(chunk)
		if total <= lr.max {
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && total == 0:
			return nil, err
		case total > lr.max:
			lr.buf = lr.buf[:0]
			return nil, &LineTooLongError{Len: total, Max: lr.max}
		default:
			// A line (maybe the last, without newline: err is io.EOF and
			// is reported on the next call).
			return lr.buf, nil
		}
	}
}

// SplitBatch reports whether data is a JSON array (a batch, as in
// 2025-03-26) and returns its elements. A single message is returned as the
// only element with batch false.
func SplitBatch(data []byte) (elems []json.RawMessage, batch bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return []json.RawMessage{data}, false, nil
	}
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, true, fmt.Errorf("jsonrpc: parse batch: %w", err)
	}
	return elems, true, nil
}

// JoinBatch encodes messages as a batch array.
func JoinBatch(msgs [][]byte) []byte {
	n := 2
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}
