package replayer

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestKeyTable: every key filed is found with its own list, also keys
// whose probes start at the same slot and keys that share one of their two
// hashes; a key never filed is not found; a list changed in place keeps the
// change when the table grows.
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
	for i := 1000; i < 4000; i++ { // the table grows
		k := indexKey{uint64(i), uint64(i)}
		keys = append(keys, k)
		tab.put(k, keyList{id: int32(i)})
	}
	check("after growth")
	if got := tab.get(keys[5]).times0; got != 42 {
		t.Errorf("a list changed in place reads times0 %d, want 42", got)
	}
	if full := tab.n * 4; full > len(tab.slots)*3 {
		t.Errorf("%d keys in a table of %d: more than 3/4 full", tab.n, len(tab.slots))
	}
}

// TestKeyTableAllocates: filing n keys writes about twice the memory
// of the final table (each growth doubles it), not the five times that
// growth by a quarter writes: fresh memory, a page fault every 4 KiB, in
// the load of a large cassette. The table is more than 3/8 full.
func TestKeyTableAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
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
	runtime.ReadMemStats(&after)
	final := len(tab.slots) * int(unsafe.Sizeof(keyEntry{}))
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(final); ratio > 2.1 {
		t.Errorf("filing %d keys allocated %.2f times the %d bytes of the table, want at most 2.1", n, ratio, final)
	}
	if len(tab.slots)*3 > n*8 {
		t.Errorf("%d keys in %d slots: less than 3/8 full", n, len(tab.slots))
	}
	if l := tab.get(keys[n/2]); l == nil || l.id != n/2 {
		t.Fatalf("key %d: list %v", n/2, l)
	}
}
