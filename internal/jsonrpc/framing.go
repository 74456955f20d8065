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
	return SplitBatchTo(nil, data)
}

// SplitBatchTo is SplitBatch that puts a single message in elems (which it
// returns): a caller that passes room for one (an array on its stack)
// splits a single message without an allocation. A batch's elements get
// a slice of their own, made once for them all, as SplitBatch's.
func SplitBatchTo(elems []json.RawMessage, data []byte) (_ []json.RawMessage, batch bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return append(elems[:0], data), false, nil
	}
	return AppendBatch(nil, append([]byte(nil), data...))
}

// AppendBatch is SplitBatch that appends the elements to elems and leaves
// them pieces of data itself, for a caller that is done with them before
// data changes (or copies what it keeps): a batch costs no copy, and a
// caller that hands elems back for the next batch no allocation.
func AppendBatch(elems []json.RawMessage, data []byte) ([]json.RawMessage, bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return append(elems, data), false, nil
	}
	fail := func(i int, what string) ([]json.RawMessage, bool, error) {
		return nil, true, fmt.Errorf("jsonrpc: parse batch: %s at offset %d", what, i)
	}
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == ']' {
		if skipSpace(data, i+1) != len(data) {
			return fail(i+1, "data after the array")
		}
		if elems == nil {
			elems = []json.RawMessage{}
		}
		return elems, true, nil
	}
	if elems == nil {
		n := bytes.Count(data, []byte("},{")) + 1 // a guess at the length, for one allocation
		elems = make([]json.RawMessage, 0, n)
	}
	for {
		end, ok := validValue(data, i, 1)
		if !ok {
			return fail(end, "invalid JSON value")
		}
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return fail(i, "unexpected end of the array")
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
			continue
		case ']':
			if skipSpace(data, i+1) != len(data) {
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
