package jsonrpc

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// This file reads the inside of JSON strings eight bytes at a time: most of
// a message's bytes are in its strings (names, texts, the client's
// capabilities under _meta), and the validator and the skipping walks
// (Valid, EachMemberRaw) looked at each of them in turn.

const (
	ones  = 0x0101010101010101 // 0x01 in each byte of a word
	highs = 0x8080808080808080 // 0x80 in each byte of a word
)

// zeroBytes marks with 0x80 each byte of w that is zero. The lowest mark is
// exact; a mark above it may be wrong (a borrow), so a caller uses the
// lowest only.
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w & highs }

// stringRun returns the offset of the first byte at or after i in b that a
// string's reader must look at (a quote, a backslash or a control byte),
// looking eight bytes at a time; when fewer than eight bytes remain
// unlooked, the offset where they begin, for the caller to read one by
// one.
func stringRun(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// (w - 0x20…) &^ w marks the bytes below 0x20 exactly up to the
		// first of them, as zeroBytes does the zero bytes.
		m := zeroBytes(w^(ones*'"')) | zeroBytes(w^(ones*'\\')) | (w-ones*0x20)&^w&highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}

// skipString returns the offset just past the JSON string that starts at
// i (b[i] is its quote). Like skipValue it trusts b to be valid.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		if i = stringRun(b, i); i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}
