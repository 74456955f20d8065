package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// publicPackages are the packages an outside module imports.
var publicPackages = []string{"cassettes", "guard", "matcher", "mcpmocktest", "recorder", "replayer", "view"}

// TestExportedAPINamesNoInternalType fails when an exported function,
// method, type, variable or constant of a public package mentions a type
// from an internal package (or a third-party MCP SDK) in its signature:
// an outside module could not call it ("use of internal package ... not
// allowed").
func TestExportedAPINamesNoInternalType(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	for _, pkg := range publicPackages {
		found = append(found, leaks(t, filepath.Join(root, pkg), pkg)...)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Error(f)
	}
}

// TestLeaksAreFound: the check finds an internal type in an exported
// signature, and not in an unexported one or in a body.
func TestLeaksAreFound(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import (
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	j "github.com/mcpmock/mcpmock/internal/jsonrpc"
)

type T struct {
	Msg  *jsonrpc.Message
	hide *jsonrpc.Message
}

func (T) Handle(m *j.Message) {}
func (T) handle(m *j.Message) {}
func Ok() { var _ jsonrpc.ID }
func Bad() []jsonrpc.ID { return nil }
var V jsonrpc.ID
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(leaks(t, dir, "p"), "\n")
	for _, want := range []string{"T.Msg", "T.Handle", "func Bad", "var V"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s not found in:\n%s", want, got)
		}
	}
	for _, not := range []string{"hide", "handle", "Ok"} {
		if strings.Contains(got, not) {
			t.Errorf("%s reported:\n%s", not, got)
		}
	}
}

// leaks returns the exported declarations of the Go package in dir (test
// files left out) whose signature names an internal or SDK type.
func leaks(t *testing.T, dir, pkg string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		banned := map[string]string{} // import name → path
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") && !strings.Contains(path, "modelcontextprotocol/go-sdk") && !strings.Contains(path, "mark3labs/mcp-go") {
				continue
			}
			local := filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			banned[local] = path
		}
		if len(banned) == 0 {
			continue
		}
		report := func(what string, n ast.Node) {
			if n == nil {
				return
			}
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && banned[x.Name] != "" {
						out = append(out, pkg+": "+what+" names "+banned[x.Name]+"."+sel.Sel.Name+" ("+fset.Position(sel.Pos()).String()+")")
					}
				}
				_, isFunc := n.(*ast.FuncLit)
				return !isFunc
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				what := "func " + d.Name.Name
				if d.Recv != nil && len(d.Recv.List) > 0 {
					recv := receiverName(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					what = recv + "." + d.Name.Name
				}
				report(what, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						exportedParts(s, report)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								report(d.Tok.String()+" "+n.Name, s.Type)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// exportedParts reports the parts of an exported type that an outside
// module sees: its exported fields and interface methods, or the type it
// is defined as.
func exportedParts(s *ast.TypeSpec, report func(string, ast.Node)) {
	switch typ := s.Type.(type) {
	case *ast.StructType:
		for _, f := range typ.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() {
					report(s.Name.Name+"."+n.Name, f.Type)
				}
			}
			if len(f.Names) == 0 { // embedded
				report(s.Name.Name+" (embedded)", f.Type)
			}
		}
	case *ast.InterfaceType:
		for _, m := range typ.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					report(s.Name.Name+"."+n.Name, m.Type)
				}
			}
		}
	default:
		report("type "+s.Name.Name, s.Type)
	}
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
