package recorder

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
)

func TestPendingSet(t *testing.T) {
	var s pendingSet
	for i, id := range []jsonrpc.ID{"1", "2", "3", "4"} {
		s.add(id, 10+i)
	}
	s.add("2", 20) // an id reused while in flight moves to the end
	if idx, ok := s.remove("3"); !ok || idx != 12 {
		t.Errorf("remove 3 = %d, %v; want 12, true", idx, ok)
	}
	if _, ok := s.remove("3"); ok {
		t.Error("3 removed twice")
	}
	if diff := cmp.Diff([]jsonrpc.ID{"1", "4", "2"}, s.ids()); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if first, _ := s.oldest(); first != 10 {
		t.Errorf("oldest = %d, want 10", first)
	}
	if last, _ := s.latest(); last != 20 {
		t.Errorf("latest = %d, want 20", last)
	}
	for _, id := range s.ids() {
		s.remove(id)
	}
	if _, ok := s.latest(); ok || s.len() != 0 || s.first != nil {
		t.Errorf("not empty after removing all: %+v", s)
	}
}

func TestFIFO(t *testing.T) {
	var q fifo[int]
	var want []int
	next := 0
	// Pushes and pops interleaved, past several compactions.
	for round := range 50 {
		for range round % 7 * 10 {
			q.push(next)
			want = append(want, next)
			next++
		}
		for range round % 5 * 10 {
			v, ok := q.front()
			if len(want) == 0 {
				if ok {
					t.Fatalf("round %d: front of an empty queue = %d", round, v)
				}
				break
			}
			if !ok || v != want[0] {
				t.Fatalf("round %d: front = %d, %v; want %d", round, v, ok, want[0])
			}
			q.pop()
			want = want[1:]
		}
	}
	if got := q.items[q.head:]; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
}
