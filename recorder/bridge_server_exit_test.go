//go:build unix

package recorder

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStdioBridgeNoticesServerExit: the bridge sees its server exit even
// when a descendant keeps the server's stdout open (as a wrapper such as
// sh -c or npx leaves it), as the stdio tap does.
func TestStdioBridgeNoticesServerExit(t *testing.T) {
	rec, err := New(filepath.Join(t.TempDir(), "c.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// cat keeps stdout open until its stdin (the bridge's) is closed.
	b, err := NewStdioBridge([]string{"sh", "-c", "exec 3<&0; cat <&3 3<&- & exit 4"}, os.Stderr, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	<-b.Done() // never closed while cat holds stdout, before
	if status, err := b.Close(); err != nil || status != 4 {
		t.Errorf("Close() = %d, %v; want 4, nil", status, err)
	}
}
