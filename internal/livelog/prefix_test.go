package livelog

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoDoublePrefix: the text handler writes "mcpmock: " before every
// line, so no log call of the project writes it again (lines read
// "mcpmock: mcpmock: ..." when one did).
func TestNoDoublePrefix(t *testing.T) {
	call := regexp.MustCompile(`\.(Warn|Info|Error|Debug)\((fmt\.Sprintf\()?"mcpmock[: ]`)
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if call.MatchString(line) {
				t.Errorf("%s:%d: a log call writes the prefix the handler writes: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
