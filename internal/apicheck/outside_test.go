package apicheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const modulePath = "github.com/mcpmock/mcpmock"

// TestOutsideModuleNamesTheAPI writes a module of its own that requires
// mcpmock (a replace directive to this tree), and in it one declaration
// for every exported function, method, field, variable, constant and type
// of the public packages, with the declaration's type spelled out:
//
//	var _ func(*p1.Cassette, *p2.Options) (*p2.Engine, error) = p2.New
//	var _ func(*p2.Engine, *p2.HTTPOptions) *p2.HTTPHandler = (*p2.Engine).Handler
//
// and builds and vets it. A reference alone would compile even when a
// signature names an internal type (Go lets an outside module use a value
// whose type it cannot name); spelling the type out needs its package
// imported, so an internal type in a signature fails the build with "use
// of internal package ... not allowed", an unexported one with "not
// exported". It is what a user writing a wrapper, a fake or a table of
// handlers has to be able to write. Generic functions and types are
// referenced without their type spelled out (they need instantiating).
//
// The build is offline: GOPROXY=off, GOFLAGS=-mod=mod, GOWORK=off, the
// dependencies from the module cache and this module's go.sum.
func TestOutsideModuleNamesTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own (-short)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := typeCheck(t, root, publicPackages)
	src, n := outsideSource(pkgs)
	for _, p := range pkgs {
		_, k := outsideSource([]*types.Package{p})
		t.Logf("%s: %d exported identifiers (functions, methods, fields, variables, constants, types)", p.Path(), k)
	}
	if n < 100 {
		t.Fatalf("only %d declarations generated for %d packages: the generator lost the API", n, len(pkgs))
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module example.com/outside\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n",
		goVersion(t, root), modulePath, modulePath, root)
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "api.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.CommandContext(t.Context(), "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s in an outside module naming the API of %s (%d declarations):\n%s\n(the module is api.go below; an internal or unexported type in an exported signature cannot be named from outside)\n%s",
				strings.Join(args, " "), strings.Join(publicPackages, ", "), n, out, numbered(src))
			return
		}
	}
}

// TestPublicPackagesListed: every package an outside module can import
// (not main, not internal, not an example) is in publicPackages, so that
// a new one is checked too.
func TestPublicPackagesListed(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-f", "{{if ne .Name \"main\"}}{{.ImportPath}}{{end}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var got []string
	for path := range strings.FieldsSeq(string(out)) {
		rel := strings.TrimPrefix(path, modulePath+"/")
		if strings.Contains("/"+rel+"/", "/internal/") || strings.HasPrefix(rel, "examples/") {
			continue
		}
		got = append(got, rel)
	}
	want := slices.Sorted(slices.Values(publicPackages))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("importable packages (-publicPackages +go list):\n%s", diff)
	}
}

// TestOutsideSourceNamesTypes: the generated declarations spell out the
// types, so that an internal type in a signature makes the outside module
// import an internal package.
func TestOutsideSourceNamesTypes(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "errors"

type T struct{ Field []error }

func New(n int, opts ...string) (*T, error) { return nil, errors.New("x") }
func (t *T) Do(e error) bool              { return false }
func Map[K comparable](k K) K            { return k }
func (t *T) hidden()                     {}

var V = 3

const C = "c"
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	pkg := checkDir(t, fset, dir, "example.com/p")
	got, n := outsideSource([]*types.Package{pkg})
	for _, want := range []string{
		"var _ func(int, ...string) (*p1.T, error) = p1.New",
		"var _ func(*p1.T, error) bool = (*p1.T).Do",
		"var _ []error = x.Field",
		"var _ = p1.Map",
		"var _ int = p1.V",
		"var _ = p1.C",
		"var _ p1.T",
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("%q missing from:\n%s", want, got)
		}
	}
	if bytes.Contains(got, []byte("hidden")) || n != 7 {
		t.Errorf("%d declarations, want 7 and none for an unexported method:\n%s", n, got)
	}
}

// typeCheck type-checks the public packages from the export data that go
// list -export writes for them and their dependencies.
func typeCheck(t *testing.T, root string, dirs []string) []*types.Package {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var pkgs []*types.Package
	for _, d := range dirs {
		pkg, err := imp.Import(modulePath + "/" + d)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

// checkDir type-checks the one package in dir from source (standard
// library imports only).
func checkDir(t *testing.T, fset *token.FileSet, dir, path string) *types.Package {
	t.Helper()
	files := parseDir(t, fset, dir)
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check(path, fset, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// outsideSource is the outside module's file: one declaration for each
// exported identifier of pkgs, and how many.
func outsideSource(pkgs []*types.Package) ([]byte, int) {
	aliases := map[string]string{} // import path → name in the file
	var paths []string
	qual := func(p *types.Package) string {
		if a, ok := aliases[p.Path()]; ok {
			return a
		}
		a := fmt.Sprintf("p%d", len(aliases)+1)
		aliases[p.Path()] = a
		paths = append(paths, p.Path())
		return a
	}
	for _, p := range pkgs {
		qual(p) // the public packages first: p1, p2... in order
	}
	var body bytes.Buffer
	n := 0
	decl := func(format string, args ...any) {
		fmt.Fprintf(&body, format+"\n", args...)
		n++
	}
	typ := func(t types.Type) string { return types.TypeString(t, qual) }
	for _, p := range pkgs {
		q := qual(p)
		fmt.Fprintf(&body, "\n// %s\n", p.Path())
		scope := p.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			ref := q + "." + name
			switch obj := obj.(type) {
			case *types.Func:
				if obj.Type().(*types.Signature).TypeParams().Len() > 0 {
					decl("var _ = %s", ref)
					continue
				}
				sig := obj.Type().(*types.Signature)
				asFunc := types.NewSignatureType(nil, nil, nil, types.NewTuple(unnamed(sig.Params())...), types.NewTuple(unnamed(sig.Results())...), sig.Variadic())
				decl("var _ %s = %s", typ(asFunc), ref)
			case *types.Var:
				decl("var _ %s = %s", typ(obj.Type()), ref)
			case *types.Const:
				decl("var _ = %s", ref)
			case *types.TypeName:
				named, ok := obj.Type().(*types.Named)
				if obj.IsAlias() || !ok || named.TypeParams().Len() > 0 {
					decl("var _ %s", ref)
					continue
				}
				decl("var _ %s", ref)
				n += typeMembers(&body, named, ref, typ)
			}
		}
	}
	var out bytes.Buffer
	out.WriteString("// Code generated by TestOutsideModuleNamesTheAPI; DO NOT EDIT.\n\npackage outside\n\nimport (\n")
	sort.Strings(paths)
	for _, path := range paths {
		fmt.Fprintf(&out, "\t%s %q\n", aliases[path], path)
	}
	out.WriteString(")\n")
	out.Write(body.Bytes())
	return out.Bytes(), n
}

// typeMembers writes a declaration for each exported method of a named
// type (as a method expression, the receiver first) and each exported
// field of its struct, and returns how many.
func typeMembers(w *bytes.Buffer, named *types.Named, ref string, typ func(types.Type) string) int {
	n := 0
	_, isInterface := named.Underlying().(*types.Interface)
	recv, expr := types.Type(types.NewPointer(named)), "(*"+ref+")"
	if isInterface {
		recv, expr = named, ref
	}
	ms := types.NewMethodSet(recv)
	for i := range ms.Len() {
		m := ms.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		params := []*types.Var{types.NewParam(token.NoPos, nil, "", recv)}
		params = append(params, unnamed(sig.Params())...)
		asFunc := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), types.NewTuple(unnamed(sig.Results())...), sig.Variadic())
		fmt.Fprintf(w, "var _ %s = %s.%s\n", typ(asFunc), expr, m.Name())
		n++
	}
	if st, ok := named.Underlying().(*types.Struct); ok {
		var fields []string
		for f := range st.Fields() {
			if f.Exported() {
				fields = append(fields, fmt.Sprintf("\tvar _ %s = x.%s", typ(f.Type()), f.Name()))
			}
		}
		if len(fields) > 0 {
			fmt.Fprintf(w, "func _(x *%s) {\n%s\n}\n", ref, strings.Join(fields, "\n"))
			n += len(fields)
		}
	}
	return n
}

// unnamed is the types of a tuple as parameters without names (a method
// expression's receiver has none, and Go does not mix the two).
func unnamed(tuple *types.Tuple) []*types.Var {
	var out []*types.Var
	for v := range tuple.Variables() {
		out = append(out, types.NewParam(token.NoPos, nil, "", v.Type()))
	}
	return out
}

// goVersion is the go line of the module at root.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no go line in go.mod")
	return ""
}

// numbered is src with line numbers, for a failure to point into.
func numbered(src []byte) string {
	var b strings.Builder
	for i, line := range strings.Split(string(src), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, line)
	}
	return b.String()
}

// parseDir parses the Go files of dir, test files left out.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	return files
}
