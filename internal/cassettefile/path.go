package cassettefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is the error of a cassette path that names something other
// than a regular file (after following symbolic links): a directory, a
// named pipe, a device, a socket. Such a path is refused at once: reading a
// named pipe would block, reading /dev/zero would never end.
var ErrNotRegular = errors.New("not a regular file")

// maxLinks bounds the symbolic links followed from one path (as Linux's
// MAXSYMLINKS does).
const maxLinks = 40

// Open opens the cassette file at path for reading, following
// symbolic links, and returns it with its size. Anything but a regular file
// is refused before it is read. The file is opened without blocking, so
// that a named pipe put in place between the check and the open is refused
// too instead of waiting for a writer.
func Open(path string) (*os.File, int64, error) {
	fail := func(err error) (*os.File, int64, error) {
		return nil, 0, fmt.Errorf("load cassette %q: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(statError(path, err))
	}
	if err := checkRegular(path, fi); err != nil {
		return fail(err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return fail(PlainError(err))
	}
	fi, err = f.Stat()
	if err == nil {
		err = checkRegular(path, fi)
	}
	if err != nil {
		f.Close()
		return fail(err)
	}
	return f, fi.Size(), nil
}

// ReadFile returns the content of the cassette file at path, which must be
// a regular file (or a symbolic link to one); anything else is refused
// with ErrNotRegular before it is read.
func ReadFile(path string) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadAll(f, size)
	if err != nil {
		return nil, fmt.Errorf("load cassette %q: %w", path, PlainError(err))
	}
	return data, nil
}

// ReadAll reads f to its end; size is its size when it was opened.
func ReadAll(f io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size+512)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// checkRegular refuses a file that is not a regular one, saying what it is.
func checkRegular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	what := path
	if target, err := filepath.EvalSymlinks(path); err == nil && target != filepath.Clean(path) {
		what = fmt.Sprintf("%s (a symbolic link to %s)", path, target)
	}
	return fmt.Errorf("%s is %s, %w", what, kindOf(fi.Mode()), ErrNotRegular)
}

// kindOf names the kind of file that mode says.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// statError explains an error of os.Stat on path: a dangling symbolic
// link is named as such (still an fs.ErrNotExist).
func statError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return notExist(fmt.Sprintf("%s is a symbolic link to %s, which does not exist", path, target))
		}
	}
	return PlainError(err)
}

// notExist is an error that says why a file does not exist; errors.Is
// sees fs.ErrNotExist in it.
type notExist string

func (e notExist) Error() string        { return string(e) }
func (e notExist) Is(target error) bool { return target == fs.ErrNotExist }

// PlainError is err without the path that an *fs.PathError or an
// *os.LinkError repeats (a temporary file's name means nothing to a user);
// errors.Is still sees through it.
func PlainError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// writeTarget returns the file that a write of path replaces: path, or
// the file at the end of its symbolic links (which need not exist yet), so
// that a cassette that is a link stays a link and its target gets the new
// content. A target that exists and is not a regular file is refused.
func writeTarget(path string) (string, error) {
	target := path
	for range maxLinks {
		fi, err := os.Lstat(target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return target, nil
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			if !fi.Mode().IsRegular() {
				return "", checkRegular(path, fi)
			}
			return target, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", fmt.Errorf("%s is a chain of more than %d symbolic links, %w", path, maxLinks, ErrNotRegular)
}

// PrepareWrite makes path ready for WriteAtomic before anything is
// recorded: it refuses a path whose target (after symbolic links) exists
// and is not a regular file, and creates the missing parent directories of
// the target. It returns the directories it created, outermost first, for
// RemoveCreated when nothing is written after all.
func PrepareWrite(path string) (created []string, err error) {
	target, err := writeTarget(path)
	if err != nil {
		return nil, saveError(path, path, err)
	}
	dir := filepath.Dir(target)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append([]string{d}, created...)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		RemoveCreated(created)
		return nil, saveError(path, target, err)
	}
	return created, nil
}

// RemoveCreated removes the directories that PrepareWrite created, the
// innermost first, as long as they are empty.
func RemoveCreated(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		if os.Remove(dirs[i]) != nil {
			return
		}
	}
}

// CreateTemp creates a temporary file next to the file that a write of
// the cassette at path replaces (its target after symbolic links), named
// "." + the file's name + "." + kind + "-*". Its error names the cassette,
// not the temporary file, and says what to do.
func CreateTemp(path, kind string) (*os.File, error) {
	f, _, err := createTemp(path, kind)
	return f, err
}

// createTemp is CreateTemp, also returning the target.
func createTemp(path, kind string) (*os.File, string, error) {
	target, err := writeTarget(path)
	if err != nil {
		return nil, "", saveError(path, path, err)
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+"."+kind+"-*")
	if err != nil {
		return nil, "", saveError(path, target, err)
	}
	return f, target, nil
}

// saveError is an error of writing the cassette at path (whose target is
// target): what went wrong, with the cassette's name (not that of a
// temporary file) and what to do.
func saveError(path, target string, err error) error {
	if errors.Is(err, ErrNotRegular) {
		return fmt.Errorf("save cassette %q: %w", path, err)
	}
	dir := filepath.Dir(target)
	why := PlainError(err)
	var advice string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		advice = fmt.Sprintf("the directory %s does not exist: create it, or choose another path", dir)
	case errors.Is(err, fs.ErrPermission):
		advice = fmt.Sprintf("no permission to write in %s: make it writable, or choose another path", dir)
	case errors.Is(err, syscall.ENOSPC):
		advice = "free some space on the disk"
	case errors.Is(err, syscall.EROFS):
		advice = "choose a path on a writable file system"
	case errors.Is(err, syscall.ENOTDIR):
		advice = fmt.Sprintf("a part of %s is a file, not a directory: choose another path", dir)
	default:
		return fmt.Errorf("save cassette %q: %w (the cassette is left as it was)", path, why)
	}
	return fmt.Errorf("save cassette %q: %w: %s (the cassette is left as it was)", path, why, advice)
}
