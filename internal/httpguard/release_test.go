package httpguard

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestReleasedBodies: a body whose handler released it (Release) is read
// into again by later requests, and overwritten under the race detector
// once the handler has returned; a body that was not released keeps its
// bytes whatever comes after, as a recording needs.
func TestReleasedBodies(t *testing.T) {
	var kept, released []byte
	url := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := Bytes(r)
		if !ok {
			http.Error(w, "no bytes", 500)
			return
		}
		switch {
		case bytes.HasPrefix(b, []byte(`{"keep"`)):
			kept = b
		case bytes.HasPrefix(b, []byte(`{"release"`)):
			released = b
			Release(r)
		default:
			Release(r)
		}
		fmt.Fprint(w, len(b))
	}), nil)
	const keep = `{"keep":"these bytes, as a recording keeps them"}`
	post(t, url, keep, nil)
	const release = `{"release":"these bytes, which the handler said it keeps not"}`
	post(t, url, release, nil)
	for i := range 200 {
		post(t, url, fmt.Sprintf(`{"other":%d,"text":"%s"}`, i, strings.Repeat("x", len(keep))), nil)
	}
	if string(kept) != keep {
		t.Errorf("a body that was not released reads %q, want %q", kept, keep)
	}
	if raceEnabled && string(released) == release {
		t.Errorf("a released body still reads %q after its handler returned, want it overwritten", released)
	}
}
