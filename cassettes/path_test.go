package cassettes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/internal/cassettefile"
)

// TestLoadRefusesNotRegular: Load and ReadFile refuse a directory and a
// dangling link with an error that names the path and says what it is.
func TestLoadRefusesNotRegular(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub.json")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink("nowhere.json", dangling); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	for _, tc := range []struct {
		path, want string
		is         error
	}{
		{sub, sub + " is a directory, not a regular file", ErrNotRegular},
		{dangling, dangling + " is a symbolic link to nowhere.json, which does not exist", fs.ErrNotExist},
	} {
		for name, load := range map[string]func(string) error{
			"Load":     func(p string) error { _, err := Load(p); return err },
			"ReadFile": func(p string) error { _, err := ReadFile(p); return err },
		} {
			err := load(tc.path)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%s) = %v, want %q (%v)", name, tc.path, err, tc.want, tc.is)
			}
		}
	}
}

// TestSaveThroughSymlink: Save writes the file a link points to (created
// when the link dangles) and leaves the link in place.
func TestSaveThroughSymlink(t *testing.T) {
	for _, exists := range []bool{true, false} {
		dir := t.TempDir()
		target := filepath.Join(dir, "store", "real.json")
		if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if exists {
			if err := Save(target, New()); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(dir, "link.json")
		if err := os.Symlink(filepath.Join("store", "real.json"), link); err != nil {
			t.Skipf("no symbolic links: %v", err)
		}
		if err := Save(link, sample()); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("exists=%v: the link was replaced (%v)", exists, err)
		}
		c, err := Load(target)
		if err != nil || len(c.Interactions) != len(sample().Interactions) {
			t.Fatalf("exists=%v: the target holds %v (%v)", exists, c, err)
		}
		for _, d := range []string{dir, filepath.Dir(target)} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("a temporary file was left: %s", e.Name())
				}
			}
		}
	}
}

// TestSaveErrors: Save does not replace a directory, and its
// errors name the cassette, never a temporary file.
func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.json")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{sub, `save cassette "` + sub + `": ` + sub + " is a directory, not a regular file"},
		{filepath.Join(dir, "missing", "c.json"), "the directory " + filepath.Join(dir, "missing") + " does not exist: create it, or choose another path"},
		{filepath.Join(file, "c.json"), "is a file, not a directory"},
	} {
		err := Save(tc.path, New())
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ".tmp-") {
			t.Errorf("Save(%s) = %v, want %q and no temporary name", tc.path, err, tc.want)
		}
	}
}

// TestPrepareWrite: cassettefile.PrepareWrite makes the missing directories and
// RemoveCreated removes them again while they are empty.
func TestPrepareWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "c.json")
	created, err := cassettefile.PrepareWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")}; strings.Join(created, ",") != strings.Join(want, ",") {
		t.Errorf("created %q, want %q", created, want)
	}
	if err := Save(path, New()); err != nil {
		t.Fatal(err)
	}
	cassettefile.RemoveCreated(created) // not empty: kept
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	cassettefile.RemoveCreated(created)
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the created directories are still there (%v)", err)
	}
}
