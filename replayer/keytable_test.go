package replayer

import "testing"

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
