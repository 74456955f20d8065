package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var benchCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric","days":[1,2,3]},"_meta":{"progressToken":"p-42","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)

// BenchmarkParse is the decoding of one live message; its baseline is
// encoding/json decoding the same message into a struct.
func BenchmarkParse(b *testing.B) {
	b.Run("jsonrpc.Parse", func(b *testing.B) {
		b.SetBytes(int64(len(benchCall)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(benchCall); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(benchCall)))
		b.ReportAllocs()
		for b.Loop() {
			var w wire
			if err := json.Unmarshal(benchCall, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkValid compares the validator with encoding/json's Valid.
func BenchmarkValid(b *testing.B) {
	doc := []byte("[" + strings.Repeat(string(benchCall)+",", 999) + string(benchCall) + "]")
	b.Run("jsonrpc.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("baseline-json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !json.Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkLineReader is the stdio framing of 1,000 messages.
func BenchmarkLineReader(b *testing.B) {
	stream := bytes.Repeat(append(append([]byte(nil), benchCall...), '\n'), 1000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(stream), 0)
		n := 0
		for {
			if _, err := lr.ReadLine(); err != nil {
				break
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("read %d lines", n)
		}
	}
}
