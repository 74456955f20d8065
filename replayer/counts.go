package replayer

import "math"

// counts is a count for each of n items numbered from 0 (a session's uses
// of the recorded requests, its place in each key list), held in pages
// made on first use: a session that touches few items of a large cassette
// holds a page or two, and one that touches many pays an index into an
// array for each, where a map paid its hashing, its growth and a cache
// miss more. A count is 4 bytes, so that the counts of a session over a
// cassette of 100,000 requests (400 KB) stay in the core's cache next to
// the rest (BenchmarkReplayScattered).
type counts struct {
	pages []*countPage
}

const countPageSize = 512

type countPage [countPageSize]int32

// get returns item i's count, 0 until it is set.
func (c *counts) get(i int) int {
	if p := i / countPageSize; p < len(c.pages) && c.pages[p] != nil {
		return int(c.pages[p][i%countPageSize])
	}
	return 0
}

// add adds one to item i's count; a count stays at the largest an int32
// holds (a request used 2^31 times by one session).
func (c *counts) add(i int) {
	if v := c.at(i); *v < math.MaxInt32 {
		*v++
	}
}

// set sets item i's count to v (at most the largest int32).
func (c *counts) set(i, v int) {
	*c.at(i) = int32(min(v, math.MaxInt32))
}

// at returns the place of item i's count, making its page.
func (c *counts) at(i int) *int32 {
	p := i / countPageSize
	if p >= len(c.pages) {
		c.pages = append(c.pages, make([]*countPage, p+1-len(c.pages))...)
	}
	if c.pages[p] == nil {
		c.pages[p] = new(countPage)
	}
	return &c.pages[p][i%countPageSize]
}
