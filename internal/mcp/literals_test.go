package mcp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The trees that may spell protocol facts out: this package, and the
// harnesses that check mcpmock from outside against literal values.
var literalsAllowed = []string{"internal/mcp", "bench", "conformance", "examples", "fidelity"}

// TestNoProtocolLiterals fails when a non-test Go file outside this package
// (and outside the trees of literalsAllowed) spells a protocol version or
// an MCP header name as a string literal: each is a fact this package
// holds once, and a copy elsewhere drifts.
func TestNoProtocolLiterals(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	version := regexp.MustCompile(`^20\d\d-\d\d-\d\d$`)
	headers := []string{HeaderSessionID, HeaderProtocolVersion, HeaderMethod, HeaderName, HeaderLastEventID}
	bad := func(s string) string {
		switch {
		case version.MatchString(s) && s != "2006-01-02": // Go's reference date is a time layout
			return "protocol version"
		case strings.HasPrefix(strings.ToLower(s), strings.ToLower(HeaderParamPrefix)):
			return "header name"
		case strings.HasPrefix(s, MetaPrefix):
			return "_meta key"
		}
		for _, h := range headers {
			if strings.EqualFold(s, h) {
				return "header name"
			}
		}
		return ""
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			for _, a := range literalsAllowed {
				if rel == a {
					return filepath.SkipDir
				}
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if what := bad(s); what != "" {
				t.Errorf("%s: %s %q: use the constant of internal/mcp", fset.Position(lit.Pos()), what, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files scanned under %s: the walk missed the tree", files, root)
	}
}
