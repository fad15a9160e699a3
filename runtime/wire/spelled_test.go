package wire_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// spelledElsewhere are the values of wire's constants another package may
// spell on its own: a content type is also HTTP's (a schema registry's
// client speaks application/json for its own reasons).
var spelledElsewhere = map[string]bool{"application/json": true, "text/plain": true}

// TestNoLiteralIsSpelledTwice: the wire contract is spelled once, here
// (each constant as a literal of its own, so that this test reads them all).
// No production Go file of the repository (every module; generated code,
// testdata and tests aside) writes a string literal equal to one of this
// package's constants ("x-acemq-id", ".dlq", "acemq.dlx", "x-queue-type",
// a metric name ...): it names the constant instead, so the runtime, the
// generator and the operator command cannot drift apart.
func TestNoLiteralIsSpelledTwice(t *testing.T) {
	fset := token.NewFileSet()
	values := map[string]string{} // value -> constant
	own, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range own {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						if !spelledElsewhere[s] {
							values[s] = vs.Names[i].Name
						}
					}
				}
			}
		}
	}
	if len(values) < 50 {
		t.Fatalf("%d string constants read from the package: want its headers, arguments and metrics", len(values))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == self, name == "testdata", name == "golden", name == "node_modules",
				path != root && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".acemq.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && values[s] != "" {
					rel, _ := filepath.Rel(root, fset.Position(lit.Pos()).Filename)
					t.Errorf("%s:%d spells %q: use wire.%s", rel, fset.Position(lit.Pos()).Line, s, values[s])
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Fatalf("%d Go files read under %s: want the repository's modules", files, root)
	}
}
