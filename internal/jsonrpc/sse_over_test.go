package jsonrpc

import (
	"strings"
	"testing"
)

// TestSSEDecoderOver feeds streams byte by byte and checks that Over turns
// true exactly when the event in progress can only end as TooLong (at the
// byte that puts it past the maximum: overAt is its index), and never for
// an event that ends within it.
func TestSSEDecoderOver(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		max    int
		overAt int // the index of the byte after which Over is true; -1 never
	}{
		{"data past the maximum", "data: 0123456789\n\n", 8, len("data: 012345678") - 1},
		{"data without a space", "data:0123456789\n\n", 8, len("data:012345678") - 1},
		{"second data line", "data: 0123\ndata: 4567\n\n", 8, len("data: 0123\ndata: 4567") - 1},
		{"event that fits", "data: 01234567\n\ndata: ok\n\n", 8, -1},
		{"long comment", ": " + strings.Repeat("c", 100) + "\ndata: ok\n\n", 8, -1},
		{"long id", "id: " + strings.Repeat("i", 40) + "\ndata: x\n\n", 8, len("id: ") + 22 - 1},
		{"long field name", strings.Repeat("f", 100) + "\ndata: x\n\n", 8, 8 + 15},
		{"field name that fits", "event\ndata: x\n\n", 8, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewSSEDecoder(tt.max)
			var evs []Event
			got := -1
			for i := range len(tt.stream) {
				evs = d.Feed(evs, []byte{tt.stream[i]})
				if d.Over() && got < 0 {
					got = i
				}
				if !d.Over() && got >= 0 && len(evs) == 0 {
					t.Fatalf("Over turned false again at byte %d, within the event", i)
				}
			}
			if got != tt.overAt {
				t.Errorf("Over turned true after byte %d, want %d", got, tt.overAt)
			}
			tooLong := false
			for _, ev := range evs {
				tooLong = tooLong || ev.TooLong
			}
			if tooLong != (tt.overAt >= 0) {
				t.Errorf("events %+v: TooLong = %v, want %v", evs, tooLong, tt.overAt >= 0)
			}
		})
	}
}
