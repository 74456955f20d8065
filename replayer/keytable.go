package replayer

// keyTable holds the key lists of one bucket and matcher by index key: open
// addressing with linear probing over one array of slots, each a key and
// its list, at most 3/4 full. A lookup reads the slot its key hashes to
// (and, seldom, the next), so that on a large cassette it costs one cache
// miss. A directory of list numbers in front of an array of lists cost two,
// the number's and the list's: 2,200 ns a call on a cassette of 100,000
// against 2,050 in one table (BenchmarkReplayScattered), for 64 to 128
// bytes a key where the two took about 60.
type keyTable struct {
	slots []keyEntry // a slot whose list is not filed is free
	n     int        // the keys filed
}

type keyEntry struct {
	key  indexKey
	list keyList
}

// get returns the list of key k, nil when there is none. The list may be
// changed in place; it stays where it is until put files a new key.
func (t *keyTable) get(k indexKey) *keyList {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := k[0] & mask; ; i = (i + 1) & mask {
		e := &t.slots[i]
		if !e.list.filed {
			return nil
		}
		if e.key == k {
			return &e.list
		}
	}
}

// put files a new key k, which get does not find, with its list.
func (t *keyTable) put(k indexKey, l keyList) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.n++
	l.filed = true
	t.place(keyEntry{k, l})
}

// place puts e in the first free slot from its key's.
func (t *keyTable) place(e keyEntry) {
	mask := uint64(len(t.slots) - 1)
	i := e.key[0] & mask
	for t.slots[i].list.filed {
		i = (i + 1) & mask
	}
	t.slots[i] = e
}

// grow doubles the slots and files every key again.
func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]keyEntry, max(8, 2*len(old)))
	for _, e := range old {
		if e.list.filed {
			t.place(e)
		}
	}
}
