package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/cassettefile"
	"github.com/mcpmock/mcpmock/recorder"
)

// cassetteImport is "mcpmock cassette import --from FORMAT FILE -c
// CASSETTE": another tool's capture made into the cassette that record
// would have written (recorder.Import), redacted by the same rules and
// flags as record, written atomically. An existing cassette is replaced
// only with --force; on any error nothing is written.
func (e *env) cassetteImport(args []string) error {
	var path, format string
	var force bool
	var sf recordSaveFlags // record_save.go: --redact-*, --no-default-redact, --keep-timing
	flags := newFlagSet("cassette import", "mcpmock cassette import --from FORMAT FILE -c CASSETTE [flags]", e.stdout)
	flags.StringVar(&format, "from", "", "the capture's `FORMAT`: "+strings.Join(cassettes.ImportFormats(), ", ")+" (required)")
	flags.StringVarP(&path, "cassette", "c", "", "the cassette to write (required; its missing directories are made)")
	flags.BoolVar(&force, "force", false, "replace the cassette if it exists")
	sf.register(flags)
	if help, err := parse(flags, args); help || err != nil {
		return err
	}
	imp := cassettes.ImporterFor(format)
	switch {
	case format == "":
		return usagef("cassette import needs --from FORMAT (%s)", strings.Join(cassettes.ImportFormats(), ", "))
	case imp == nil:
		return usagef("unknown import format %q (want %s)", format, strings.Join(cassettes.ImportFormats(), ", "))
	case flags.NArg() != 1:
		return usagef("cassette import needs one capture file (or - for stdin), got %d", flags.NArg())
	case path == "":
		return usagef("cassette import needs the cassette to write: -c CASSETTE")
	}
	var opts recorder.Options
	if err := sf.apply(&opts); err != nil {
		return err
	}
	opts.Meta.RecordedBy = "mcpmock " + version + " cassette import"
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("cassette %q exists: give --force to replace it", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	src := flags.Arg(0)
	data, err := e.readCapture(src)
	if err != nil {
		return err
	}
	cp, err := imp(src, data)
	if err != nil {
		return err
	}
	for _, w := range cp.Warnings {
		fmt.Fprintf(e.stderr, "mcpmock: warning: import %q: %s\n", src, w)
	}
	c, err := recorder.Import(cp, &opts)
	if err != nil {
		return err
	}
	created, err := cassettefile.PrepareWrite(path)
	if err != nil {
		return err
	}
	if err := cassettes.Save(path, c); err != nil {
		cassettefile.RemoveCreated(created)
		return err
	}
	fmt.Fprintf(e.stderr, "mcpmock: imported %s (%s): %s to %s\n", src, format, importSummary(c), path)
	return nil
}

// readCapture reads the capture file, or stdin for "-".
func (e *env) readCapture(src string) ([]byte, error) {
	if src == "-" {
		return io.ReadAll(e.stdin)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("capture %q is not a regular file", src)
	}
	return os.ReadFile(src)
}

// importSummary says what an imported cassette holds.
func importSummary(c *cassettes.Cassette) string {
	requests, unanswered, raw := 0, 0, 0
	for i := range c.Interactions {
		in := &c.Interactions[i]
		switch in.Kind() {
		case "request":
			requests++
			if in.Response == nil {
				unanswered++
			}
		case "raw":
			raw++
		}
	}
	return fmt.Sprintf("%d interactions (%d requests, %d without response, %d raw lines)", len(c.Interactions), requests, unanswered, raw)
}
