package generator_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// No generated package declares an exported variable: a policy, a message
// type and the registry are each an unexported variable behind a func, so
// code outside the package cannot reassign them.
func TestGeneratedCodeExportsNoVariable(t *testing.T) {
	var files []string
	for _, glob := range []string{"../golden/*/want/*.go", "../examples/*/*.go", "../bench/orders/*.go"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	generated := 0
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if !ast.IsGenerated(f) {
			continue
		}
		generated++
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() {
						t.Errorf("%s: exported variable %s can be reassigned from outside the package", path, n.Name)
					}
				}
			}
		}
	}
	if generated < 30 {
		t.Errorf("checked %d generated files; the globs found too few", generated)
	}
}
