package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
