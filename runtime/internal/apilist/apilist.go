// Package apilist lists the exported API of a Go package from its source,
// one line per name: every exported top-level const, var, func and type,
// every exported method of an exported type, every exported field of an
// exported struct and every exported method of an exported interface. The
// runtime's API test keeps the lists of runtime, runtime/acemqimpl and
// runtime/registry as a golden file, so that the API grows only by a
// reviewed diff. The count of lines is the exported-name count the issue
// tracks.
package apilist

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// List returns the exported API of the package in dir (its non-test files
// for the build context's GOOS and GOARCH), sorted.
func List(dir string) ([]string, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("apilist: %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	var lines []string
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apilist: %w", err)
		}
		lines = append(lines, fileAPI(fset, f)...)
	}
	sort.Strings(lines)
	return dedupe(lines), nil
}

func dedupe(lines []string) []string {
	out := lines[:0]
	for i, l := range lines {
		if i > 0 && l == lines[i-1] {
			continue
		}
		out = append(out, l)
	}
	return out
}

func fileAPI(fset *token.FileSet, f *ast.File) []string {
	var lines []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			sig := node(fset, d.Type)[len("func"):]
			if d.Recv == nil {
				lines = append(lines, "func "+d.Name.Name+sig)
				continue
			}
			recv := d.Recv.List[0].Type
			if !ast.IsExported(baseName(recv)) {
				continue
			}
			lines = append(lines, "method ("+node(fset, recv)+") "+d.Name.Name+sig)
		case *ast.GenDecl:
			lines = append(lines, genAPI(fset, d)...)
		}
	}
	return lines
}

func genAPI(fset *token.FileSet, d *ast.GenDecl) []string {
	var lines []string
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.ValueSpec:
			kind := d.Tok.String()
			for _, n := range s.Names {
				if !n.IsExported() {
					continue
				}
				l := kind + " " + n.Name
				if s.Type != nil {
					l += " " + node(fset, s.Type)
				}
				lines = append(lines, l)
			}
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			lines = append(lines, typeAPI(fset, s)...)
		}
	}
	return lines
}

func typeAPI(fset *token.FileSet, s *ast.TypeSpec) []string {
	name := s.Name.Name
	params := ""
	if s.TypeParams != nil {
		params = typeParams(fset, s.TypeParams)
	}
	assign := " "
	if s.Assign.IsValid() {
		assign = " = "
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{"type " + name + params + " struct"}
		for _, f := range t.Fields.List {
			typ := node(fset, f.Type)
			if len(f.Names) == 0 {
				if ast.IsExported(baseName(f.Type)) {
					lines = append(lines, "field "+name+" embedded "+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					lines = append(lines, "field "+name+"."+n.Name+" "+typ)
				}
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{"type " + name + params + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				lines = append(lines, "imethod "+name+" embedded "+node(fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if !n.IsExported() {
					continue
				}
				sig := node(fset, m.Type)
				sig = strings.TrimPrefix(sig, "func")
				lines = append(lines, "imethod "+name+"."+n.Name+sig)
			}
		}
		return lines
	default:
		return []string{"type " + name + params + assign + node(fset, s.Type)}
	}
}

// baseName is the type name under a receiver or an embedded field:
// T, *T, T[P], *T[P], pkg.T.
func baseName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// typeParams writes a type's parameter list as its declaration does,
// [K comparable, V any]: go/printer prints no *ast.FieldList alone.
func typeParams(fset *token.FileSet, l *ast.FieldList) string {
	var ps []string
	for _, f := range l.List {
		names := make([]string, len(f.Names))
		for i, n := range f.Names {
			names[i] = n.Name
		}
		ps = append(ps, strings.Join(names, ", ")+" "+node(fset, f.Type))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

func node(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
