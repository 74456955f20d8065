package recorder

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestSummarySaysWhatTheFileHolds: the summary tells the truth about the
// file (nothing written when no interaction completed or every save was
// refused; only what the last good save wrote), a save error is logged
// once however often it repeats, and the directories New made are removed
// when nothing was written.
func TestSummarySaysWhatTheFileHolds(t *testing.T) {
	const secret = "plain-but-secret-value"
	ok := func(id string) []string {
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
	}
	bad := func(id string) []string {
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"a","arguments":{"note":"` + secret + `"}}}`, `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
	}
	for _, tc := range []struct {
		name string
		// before are the messages saved by a save of their own, after
		// those that Close saves.
		before, after []string
		want          string
		interactions  int // in the file; -1 for no file
		errors        int // save errors logged
	}{
		{"no interaction completed", nil, []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, "nothing saved: no interaction completed, PATH was not written", -1, 0},
		{"every save refused", nil, append(bad("1"), ok("2")...), "nothing saved: PATH was not written (the save failed)", -1, 1},
		{"refused after a good save", ok("1"), append(bad("2"), ok("3")...), "PATH holds only the 1 interactions of the last successful save", 1, 1},
		{"all saved", ok("1"), ok("2"), "in 2 interactions to PATH (", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "new", "sub", "c.json")
			var log strings.Builder
			rec, err := New(path, &Options{
				Forbid:        []Forbidden{{Name: "$MY_TOKEN", Value: secret}},
				FlushInterval: time.Hour,
				Logger:        slog.New(slog.NewTextHandler(&log, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			observe := func(lines []string) {
				for i, l := range lines {
					from := cassettes.FromClient
					if i%2 == 1 {
						from = cassettes.FromServer
					}
					rec.Observe(from, []byte(l), time.Now())
				}
				rec.Sync()
			}
			if tc.before != nil {
				observe(tc.before)
				if err := rec.save(false); err != nil {
					t.Fatal(err)
				}
			}
			observe(tc.after)
			rec.save(false) // a save while recording, as the saver makes
			closeErr := rec.Close()
			if want := tc.errors > 0; (closeErr != nil) != want {
				t.Errorf("Close = %v, want an error: %v", closeErr, want)
			}
			want := strings.ReplaceAll(tc.want, "PATH", path)
			if s := rec.Summary(); !strings.Contains(s, want) {
				t.Errorf("summary %q does not say %q", s, want)
			}
			if n := strings.Count(log.String(), "forbidden value"); n != tc.errors {
				t.Errorf("the save error was logged %d times, want %d:\n%s", n, tc.errors, log.String())
			}
			c, err := cassettes.Load(path)
			switch {
			case tc.interactions < 0:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a file was written: %v", err)
				}
				if _, err := os.Lstat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the directories New made are still there (%v)", err)
				}
			case err != nil:
				t.Fatal(err)
			case len(c.Interactions) != tc.interactions:
				t.Errorf("the file holds %d interactions, want %d", len(c.Interactions), tc.interactions)
			}
		})
	}
}
