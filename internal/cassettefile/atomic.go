package cassettefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes path by way of a temporary file in the same directory
// that write fills, then a rename, so that path always holds either the old
// or the new content, even if the process is killed. With durable, the file
// and the directory are also synced, so the content survives a crash of the
// machine too (a recording's intermediate saves skip that cost).
//
// A path that is a symbolic link stays one: the file at its end is the one
// replaced (created if the link dangles). A path whose target exists and is
// not a regular file is refused with ErrNotRegular. Errors name path, never
// the temporary file, and say what to do.
func WriteAtomic(path string, durable bool, write func(io.Writer) error) (err error) {
	f, target, err := createTemp(path, "tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // a write to a temporary file
			return saveError(path, target, err)
		}
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return saveError(path, target, err)
		}
	}
	if err = f.Chmod(0o644); err != nil {
		return saveError(path, target, err)
	}
	if err = f.Close(); err != nil {
		return saveError(path, target, err)
	}
	if err = os.Rename(f.Name(), target); err != nil {
		return saveError(path, target, err)
	}
	if durable {
		if d, derr := os.Open(filepath.Dir(target)); derr == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}
