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
// only element with batch false. The elements of a batch are pieces of one
// copy of data (its own memory, not the caller's): one allocation for a
// batch, not one an element, so that a batch of 100,000 requests leaves the
// collector one object to trace, not 100,000.
func SplitBatch(data []byte) (elems []json.RawMessage, batch bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return []json.RawMessage{data}, false, nil
	}
	own := append([]byte(nil), data...)
	fail := func(i int, what string) ([]json.RawMessage, bool, error) {
		return nil, true, fmt.Errorf("jsonrpc: parse batch: %s at offset %d", what, i)
	}
	i := skipSpace(own, 1)
	if i < len(own) && own[i] == ']' {
		if skipSpace(own, i+1) != len(own) {
			return fail(i+1, "data after the array")
		}
		return []json.RawMessage{}, true, nil
	}
	n := bytes.Count(own, []byte("},{")) + 1 // a guess at the length, for one allocation
	elems = make([]json.RawMessage, 0, n)
	for {
		end, ok := validValue(own, i, 1)
		if !ok {
			return fail(end, "invalid JSON value")
		}
		elems = append(elems, own[i:end:end])
		i = skipSpace(own, end)
		if i >= len(own) {
			return fail(i, "unexpected end of the array")
		}
		switch own[i] {
		case ',':
			i = skipSpace(own, i+1)
			continue
		case ']':
			if skipSpace(own, i+1) != len(own) {
				return fail(i+1, "data after the array")
			}
			return elems, true, nil
		}
		return fail(i, "want , or ] between the elements")
	}
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
