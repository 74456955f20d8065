package grow

import (
	"slices"
	"testing"
)

func TestSliceKeepsTheElementsAndDoubles(t *testing.T) {
	type pair struct {
		s string
		n int
	}
	var s []pair
	caps := map[int]bool{}
	for i := range 3*piece/24 + 7 { // over three pieces of 24-byte pairs
		s = append(Slice(s, 1), pair{s: string(rune('a' + i%26)), n: i})
		caps[cap(s)] = true
	}
	for i, p := range s {
		if p.n != i || p.s != string(rune('a'+i%26)) {
			t.Fatalf("element %d = %+v after growing", i, p)
		}
	}
	// Doubling from 1: one capacity per power of two up to the length
	// (append's growth by a quarter takes some thirty more).
	want := 0
	for c := 1; c < 2*len(s); c *= 2 {
		want++
	}
	if len(caps) > want {
		t.Errorf("grew %d times for %d elements; doubling grows %d times at most", len(caps), len(s), want)
	}
}

func TestSliceHasRoomForN(t *testing.T) {
	b := []byte("abc")
	got := Slice(b, 1000)
	if cap(got)-len(got) < 1000 || string(got) != "abc" {
		t.Fatalf("Slice(%q, 1000): len %d cap %d %q", b, len(got), cap(got), got)
	}
	if again := Slice(got, 1000); &again[:1][0] != &got[:1][0] {
		t.Error("Slice grew a slice that had the room")
	}
	big := make([]byte, populateAtLeast+piece+5) // populated, in pieces, one short
	for i := range big {
		big[i] = byte(i * 7)
	}
	grown := Slice(big, 1)
	if !slices.Equal(grown, big) || cap(grown) < 2*cap(big) {
		t.Fatalf("Slice of %d bytes: equal %v, cap %d", len(big), slices.Equal(grown, big), cap(grown))
	}
}

// BenchmarkGrow compares append's growth with Slice's for a list of 100,000
// interactions' worth of 200-byte elements, appended one at a time.
func BenchmarkGrow(b *testing.B) {
	type elem [200]byte
	const n = 100000
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			var s []elem
			for range n {
				s = append(s, elem{})
			}
		}
	})
	b.Run("grow.Slice", func(b *testing.B) {
		for b.Loop() {
			var s []elem
			for range n {
				s = append(Slice(s, 1), elem{})
			}
		}
	})
}

// TestMake: Make is make(S, 0, n), populated or not, for any n and
// element size.
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 4 << 10, 64 << 10, 1 << 20} {
		b := Make[[]byte](n)
		if len(b) != 0 || cap(b) != n {
			t.Errorf("Make[[]byte](%d): len %d cap %d", n, len(b), cap(b))
		}
		b = append(b, make([]byte, n)...)
		for i := range b {
			b[i] = byte(i)
		}
		type big struct {
			s string
			n [30]int64
		}
		l := Make[[]big](n / 64)
		if len(l) != 0 || cap(l) != n/64 {
			t.Errorf("Make[[]big](%d): len %d cap %d", n/64, len(l), cap(l))
		}
		l = append(l, make([]big, n/64)...)
		for i := range l {
			l[i].s = "x"
		}
	}
}
