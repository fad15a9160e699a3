package runtime_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// TestNoAnyTypedHooks keeps the runtime's packages joined by calls: no
// package-level function variable with a parameter or result typed any in
// runtime/internal/... or the facade (the hooks typeimpl and outimpl
// declared, a *MessageType[T] or a *Connection passed as any because a
// function value cannot be generic), and no init of package runtime that
// sets another package's variable to a function taking or returning any.
// The facade reaches a message type through internal/msgtype's typed
// generic functions, and the outbox calls runtime's own API.
func TestNoAnyTypedHooks(t *testing.T) {
	dirs := []string{".", "acemqimpl"}
	internal, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range internal {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join("internal", e.Name()))
		}
	}
	for _, dir := range dirs {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, spec := range d.Specs {
						s := spec.(*ast.ValueSpec)
						if ft, ok := s.Type.(*ast.FuncType); ok && takesAny(ft) {
							t.Errorf("%s: package variable %s is a function taking or returning any (a hook): call a function, or a typed generic one", fset.Position(s.Pos()), s.Names[0].Name)
						}
					}
				case *ast.FuncDecl:
					if dir != "." || d.Recv != nil || d.Name.Name != "init" {
						continue
					}
					ast.Inspect(d.Body, func(n ast.Node) bool {
						as, ok := n.(*ast.AssignStmt)
						if !ok {
							return true
						}
						for i, lhs := range as.Lhs {
							if _, ok := lhs.(*ast.SelectorExpr); !ok || i >= len(as.Rhs) {
								continue
							}
							if fl, ok := as.Rhs[i].(*ast.FuncLit); ok && takesAny(fl.Type) {
								t.Errorf("%s: runtime's init sets %s to a function taking or returning any (a hook)", fset.Position(as.Pos()), selectorName(lhs))
							}
						}
						return true
					})
				}
			}
		}
	}
}

// takesAny reports whether a parameter or result of ft is typed any.
func takesAny(ft *ast.FuncType) bool {
	for _, l := range []*ast.FieldList{ft.Params, ft.Results} {
		if l == nil {
			continue
		}
		for _, f := range l.List {
			if id, ok := f.Type.(*ast.Ident); ok && id.Name == "any" {
				return true
			}
			if it, ok := f.Type.(*ast.InterfaceType); ok && len(it.Methods.List) == 0 {
				return true
			}
		}
	}
	return false
}

func selectorName(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok {
			return x.Name + "." + s.Sel.Name
		}
	}
	return "a variable"
}
