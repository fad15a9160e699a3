package generator_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
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

// The package's exported API is Generate, its Options and File, and the
// error types: the stages are internal (internal/gen/...), and what only
// cmd/acemq-gen needs is in internal/gen/pipeline. A new name here is a
// reviewed change of this list.
func TestExportedAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					got = append(got, "func "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								got = append(got, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	want := []string{"func Generate", "type Error", "type Errors", "type File", "type Options", "type Pos"}
	if !slices.Equal(got, want) {
		t.Errorf("package generator exports\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
