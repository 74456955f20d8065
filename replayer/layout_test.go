package replayer

import (
	"testing"
	"unsafe"
)

// TestRecordedLayout: a recorded request is 128 bytes, and what a replayed
// call reads of it lies in its first 64: in the array of them, which
// starts on a page, that is one cache line a call (BenchmarkReplayScattered).
// A key list and its table's slot stay small too.
func TestRecordedLayout(t *testing.T) {
	var r recorded
	if size := unsafe.Sizeof(r); size != 128 {
		t.Errorf("a recorded request is %d bytes, want 128", size)
	}
	hot := map[string]uintptr{
		"response": unsafe.Offsetof(r.response) + unsafe.Sizeof(r.response),
		"idEnd":    unsafe.Offsetof(r.idEnd) + unsafe.Sizeof(r.idEnd),
		"times":    unsafe.Offsetof(r.times) + unsafe.Sizeof(r.times),
		"index":    unsafe.Offsetof(r.index) + unsafe.Sizeof(r.index),
		"pos":      unsafe.Offsetof(r.pos) + unsafe.Sizeof(r.pos),
		"lone":     unsafe.Offsetof(r.lone) + unsafe.Sizeof(r.lone),
		"batch":    unsafe.Offsetof(r.responseBatch) + unsafe.Sizeof(r.responseBatch),
	}
	for name, end := range hot {
		if end > 64 {
			t.Errorf("%s ends at byte %d of a recorded request, past the first 64", name, end)
		}
	}
	var l keyList
	if size := unsafe.Sizeof(l); size != 32 {
		t.Errorf("a key list is %d bytes, want 32", size)
	}
	// A key table's slot, the key and its list, is 48 bytes: what a
	// lookup reads lies in one cache line or two next to each other.
	if size := unsafe.Sizeof(keyEntry{}); size != 48 {
		t.Errorf("a key table's slot is %d bytes, want 48", size)
	}
}
