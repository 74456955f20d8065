package replayer

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestKeyTable: every key filed is found with its own list, also keys
// whose probes start at the same slot and keys that share the 32 bits the
// directory keeps; a key never filed is not found; lists changed in place
// keep the change; clip keeps every list.
func TestKeyTable(t *testing.T) {
	var tab keyTable
	if tab.get(indexKey{1, 2}) != nil {
		t.Fatal("an empty table found a key")
	}
	var keys []indexKey
	for i := range 1000 {
		k := indexKey{uint64(i), uint64(i)}
		switch i % 4 {
		case 1:
			k[0] = 7 // every probe starts at one slot
		case 2:
			k[1] = 99 // the same 32 bits in the directory
		case 3:
			k[1] = uint64(i)<<32 | 99 // the same low 32 bits, other high ones
		}
		keys = append(keys, k)
		tab.put(k, keyList{id: int32(i)})
	}
	check := func(when string) {
		t.Helper()
		for i, k := range keys {
			l := tab.get(k)
			if l == nil || l.id != int32(i) {
				t.Fatalf("%s: key %d (%v) found %v", when, i, k, l)
			}
		}
		for _, k := range []indexKey{{7, 12345}, {1001, 99}, {1 << 40, 5}} {
			if l := tab.get(k); l != nil {
				t.Fatalf("%s: key %v, never filed, found list %d", when, k, l.id)
			}
		}
	}
	check("after put")
	tab.get(keys[5]).times0 = 42
	tab.clip()
	check("after clip")
	if got := tab.get(keys[5]).times0; got != 42 {
		t.Errorf("a list changed in place reads times0 %d, want 42", got)
	}
	if full := len(tab.lists) * 4; full > len(tab.dir)*3 {
		t.Errorf("%d lists in a directory of %d: more than 3/4 full", len(tab.lists), len(tab.dir))
	}
}

// TestKeyTableAllocates: filing n keys and clipping writes 4.7
// times the memory of their lists (the lists doubling, 2.6; the clip, 1;
// the directory doubling, 0.8), not the 7.7 times that append's growth by
// a quarter wrote: fresh memory, a page fault every 4 KiB, in the load of
// a large cassette.
func TestKeyTableAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race (5.9 times under it)")
	}
	const n = 100000
	keys := make([]indexKey, n)
	for i := range keys {
		keys[i] = indexKey{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)}
	}
	var tab keyTable
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, k := range keys {
		tab.put(k, keyList{id: int32(i)})
	}
	tab.clip()
	runtime.ReadMemStats(&after)
	final := n * int(unsafe.Sizeof(keyEntry{}))
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(final); ratio > 5 {
		t.Errorf("filing %d keys allocated %.1f times the %d bytes of their lists, want at most 5", n, ratio, final)
	}
	if l := tab.get(keys[n/2]); l == nil || l.id != n/2 {
		t.Fatalf("key %d: list %v", n/2, l)
	}
}
