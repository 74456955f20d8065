package replayer

import (
	"math"
	"testing"
)

// TestCounts: a count is 0 until set, add and set change that item alone,
// a page is made only for an item counted, and a count stops at the
// largest int32 rather than wrapping to a negative that would read as
// "unused".
func TestCounts(t *testing.T) {
	var c counts
	if got := c.get(123456); got != 0 || len(c.pages) != 0 {
		t.Fatalf("an empty count reads %d and made %d pages", got, len(c.pages))
	}
	c.add(5)
	c.add(5)
	c.set(countPageSize*3+1, 7)
	if got := c.get(5); got != 2 {
		t.Errorf("after two adds item 5 counts %d, want 2", got)
	}
	if got := c.get(countPageSize*3 + 1); got != 7 {
		t.Errorf("after set item %d counts %d, want 7", countPageSize*3+1, got)
	}
	for _, i := range []int{4, 6, countPageSize, countPageSize * 3} {
		if got := c.get(i); got != 0 {
			t.Errorf("item %d, never counted, counts %d", i, got)
		}
	}
	made := 0
	for _, p := range c.pages {
		if p != nil {
			made++
		}
	}
	if made != 2 {
		t.Errorf("%d pages made for items on 2 pages", made)
	}
	c.set(9, math.MaxInt32+10)
	c.add(9)
	if got := c.get(9); got != math.MaxInt32 {
		t.Errorf("a count past the largest int32 reads %d, want %d", got, math.MaxInt32)
	}
}
