// Package grow grows the large buffers and lists of the tap and the replay
// (a batch's line and answer, the requests pending) by doubling, in pieces
// that the scheduler can preempt.
//
// append grows a slice past 256 elements by a quarter at a time: a list of
// n bytes is then copied about 4n bytes in all, into 5n bytes of new memory.
// slices.Grow and append also write the new memory in one call of the
// runtime (a copy of what the slice holds, a clear of the rest), which
// cannot be preempted. On memory fresh from the system each page is a
// fault, dear on a virtual machine, and a buffer of some MiB kept its
// goroutine from preemption for tens of milliseconds while the collector's
// idle worker spun signalling it to stop.
//
// Slice doubles instead (n bytes copied, into 2n of new memory), lets make
// give the new memory (not cleared when it is fresh from the system,
// cleared in pieces otherwise) and copies in pieces. On Linux it first asks
// the kernel for the pages the copy will write, all in one call
// (populate), rather than a fault a page.
package grow

import "unsafe"

// Slice returns s with room for at least n more elements: s itself when
// it has the room, else a copy in new memory of at least twice s's
// capacity.
func Slice[S ~[]E, E any](s S, n int) S {
	if cap(s)-len(s) >= n {
		return s
	}
	grown := make(S, len(s), max(len(s)+n, 2*cap(s)))
	if size := uintptr(len(s)) * unsafe.Sizeof(*new(E)); size >= populateAtLeast {
		populate(unsafe.Pointer(unsafe.SliceData(grown)), size)
	}
	step := max(1, piece/max(1, int(unsafe.Sizeof(*new(E)))))
	for at := 0; at < len(s); at += step {
		copy(grown[at:], s[at:min(at+step, len(s))])
	}
	return grown
}

// piece is the bytes Slice copies in one call: 64 pages.
const piece = 256 << 10

// populateAtLeast is the least copy for which Slice populates the pages.
const populateAtLeast = 1 << 20

// Make returns make(S, 0, n), for a list about to be filled: on Linux the
// kernel maps the pages of its memory at once (populate) when they are at
// least populateMakeAtLeast bytes, rather than a page fault a page as it
// is written.
func Make[S ~[]E, E any](n int) S {
	s := make(S, 0, n)
	if size := uintptr(n) * unsafe.Sizeof(*new(E)); size >= populateMakeAtLeast {
		populate(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}

// populateMakeAtLeast is the least memory that Make populates: one call
// (a few µs) against the faults of 16 pages (about 17 µs each).
const populateMakeAtLeast = 64 << 10
