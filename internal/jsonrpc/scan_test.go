package jsonrpc

import (
	"testing"
)

// naiveRun is stringRun one byte at a time, as the readers were written
// before it.
func naiveRun(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(b)
}

// TestStringRun puts every byte value at every place of a run of 8 to 24
// plain bytes, alone and after another byte to look at, and checks that
// stringRun stops where a byte-by-byte reader stops (or before the last
// eight bytes, which it leaves to the caller).
func TestStringRun(t *testing.T) {
	check := func(b []byte, from int) {
		t.Helper()
		got, want := stringRun(b, from), naiveRun(b, from)
		if got > want || got < want && len(b)-got >= 8 {
			t.Fatalf("stringRun(%q, %d) = %d, want %d", b, from, got, want)
		}
		for j := got; j < want; j++ { // what it left is plain
			if naiveRun(b, j) != want {
				t.Fatalf("stringRun(%q, %d) = %d, but %d needs a look", b, from, got, j)
			}
		}
	}
	for n := 8; n <= 24; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, n)
				for k := range b {
					b[k] = 'a' + byte(k%26)
				}
				b[at] = byte(c)
				for from := 0; from <= at; from++ {
					check(b, from)
				}
				if at+1 < n { // a byte to look at after the first: borrows
					b[at+1] = 0x1f
					check(b, 0)
				}
			}
		}
	}
}

// FuzzSkipValue holds skipValue, which trusts its input, to the end of the
// value that the validator finds, in valid JSON.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a\"b\\c\u00e9 and a longer tail"`, `{"k":["x",{"y":"}]"}],"z":1}`, `[1,"\\",2]`, `"é€😀 long enough to be read eight at a time"`,
		string(benchCall),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !Valid(data) {
			return
		}
		i := skipSpace(data, 0)
		end, _ := validValue(data, i, 0)
		got, err := skipValue(data, i)
		if err != nil || got != end {
			t.Fatalf("skipValue(%q) = %d, %v; the validator ends it at %d", data, got, err, end)
		}
	})
}
