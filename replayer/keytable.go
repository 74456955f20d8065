package replayer

import "slices"

// keyTable holds the key lists of one bucket and matcher by index key. Its
// lists are in one array, in the order their keys were first filed, and
// dir finds them: open addressing over 8-byte words, each a list's number
// and 32 bits of its key, at most 3/4 full (2 MiB for 100,000 keys, where
// the lists take 4.8), so that a lookup's probes stay in one or two cache
// lines of a table that is mostly cached, and only the list found is read
// from far away. A lookup then costs one cache miss on a large cassette,
// where a Go map cost two, its control word's and its slot's
// (BenchmarkReplayScattered).
type keyTable struct {
	dir   []uint64 // 0: free; else the key's 32 bits << 32 | (list's number + 1)
	lists []keyEntry
}

type keyEntry struct {
	key  indexKey
	list keyList
}

// get returns the list of key k, nil when there is none. The list may be
// changed in place; it stays where it is until put files a new key.
func (t *keyTable) get(k indexKey) *keyList {
	if len(t.dir) == 0 {
		return nil
	}
	mask := uint64(len(t.dir) - 1)
	for i := k[0] & mask; ; i = (i + 1) & mask {
		d := t.dir[i]
		if d == 0 {
			return nil
		}
		if uint32(d>>32) == uint32(k[1]) {
			if e := &t.lists[uint32(d)-1]; e.key == k {
				return &e.list
			}
		}
	}
}

// put files a new key k, which get does not find, with its list.
func (t *keyTable) put(k indexKey, l keyList) {
	if (len(t.lists)+1)*4 > len(t.dir)*3 { // at most 3/4 full
		t.grow()
	}
	if len(t.lists) == cap(t.lists) {
		// Doubling: filing 100,000 keys writes about twice their 4.8
		// MB, where append's growth by a quarter wrote 27 MB of new
		// memory (a page fault every 4 KiB; docs/performance.md).
		t.lists = slices.Grow(t.lists, max(8, len(t.lists)))
	}
	t.lists = append(t.lists, keyEntry{k, l})
	t.place(k, uint64(len(t.lists)))
}

// place enters the list numbered n-1 under key k in dir.
func (t *keyTable) place(k indexKey, n uint64) {
	mask := uint64(len(t.dir) - 1)
	i := k[0] & mask
	for t.dir[i] != 0 {
		i = (i + 1) & mask
	}
	t.dir[i] = uint64(uint32(k[1]))<<32 | n
}

func (t *keyTable) grow() {
	t.dir = make([]uint64, max(8, 2*len(t.dir)))
	for n, e := range t.lists {
		t.place(e.key, uint64(n+1))
	}
}

// clip frees the room left in lists by their growth, once every key is
// filed.
func (t *keyTable) clip() {
	if cap(t.lists) > len(t.lists) {
		t.lists = append([]keyEntry(nil), t.lists...)
	}
}
