package recorder

import "github.com/mcpmock/mcpmock/internal/jsonrpc"

// pendingSet is the client requests waiting for their response, in arrival
// order: a map from id to a node of a doubly linked list, so that adding,
// finding and removing one, and finding the first and the latest, cost the
// same however many are pending. (They were an ordered slice once, from
// which every response deleted its request: a batch of 100,000 requests
// took 45 s to record; BenchmarkBatch.) The zero value is empty.
type pendingSet struct {
	byID        map[jsonrpc.ID]*pendingReq
	first, last *pendingReq
}

// pendingReq is one pending request and the interaction it opened (an
// index from the start of the cassette, as builder's are).
type pendingReq struct {
	id         jsonrpc.ID
	idx        int
	prev, next *pendingReq
}

func (s *pendingSet) len() int { return len(s.byID) }

// get returns the interaction of the pending request id.
func (s *pendingSet) get(id jsonrpc.ID) (int, bool) {
	if p, ok := s.byID[id]; ok {
		return p.idx, true
	}
	return 0, false
}

// add appends the request id of interaction idx; an id already pending is
// moved to the end with its new interaction.
func (s *pendingSet) add(id jsonrpc.ID, idx int) {
	s.remove(id)
	if s.byID == nil {
		s.byID = map[jsonrpc.ID]*pendingReq{}
	}
	p := &pendingReq{id: id, idx: idx, prev: s.last}
	if s.last != nil {
		s.last.next = p
	} else {
		s.first = p
	}
	s.last = p
	s.byID[id] = p
}

// remove takes the request id out and returns its interaction.
func (s *pendingSet) remove(id jsonrpc.ID) (int, bool) {
	p, ok := s.byID[id]
	if !ok {
		return 0, false
	}
	delete(s.byID, id)
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		s.first = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		s.last = p.prev
	}
	return p.idx, true
}

// latest returns the interaction of the request that came last.
func (s *pendingSet) latest() (int, bool) {
	if s.last == nil {
		return 0, false
	}
	return s.last.idx, true
}

// oldest returns the interaction of the request that came first: the
// lowest index, since a request opens an interaction at the end.
func (s *pendingSet) oldest() (int, bool) {
	if s.first == nil {
		return 0, false
	}
	return s.first.idx, true
}

// ids returns the pending ids in arrival order.
func (s *pendingSet) ids() []jsonrpc.ID {
	ids := make([]jsonrpc.ID, 0, s.len())
	for p := s.first; p != nil; p = p.next {
		ids = append(ids, p.id)
	}
	return ids
}

// fifo is a queue: a slice with the index of its head, compacted when the
// head has passed half of it, so that each push and pop costs O(1)
// amortized. The zero value is empty.
type fifo[T any] struct {
	items []T
	head  int
}

func (q *fifo[T]) push(v T) { q.items = append(q.items, v) }

// front returns the item at the head.
func (q *fifo[T]) front() (T, bool) {
	if q.head == len(q.items) {
		var zero T
		return zero, false
	}
	return q.items[q.head], true
}

// pop drops the item at the head.
func (q *fifo[T]) pop() {
	var zero T
	q.items[q.head] = zero
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 64 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}
