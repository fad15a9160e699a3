// Package apilist lists the exported API of a Go package from its source,
// one line per name: every exported top-level const, var, func and type,
// every exported method of an exported type, every exported field of an
// exported struct and every exported method of an exported interface. The
// runtime's API test keeps the lists of runtime, runtime/acemqimpl and
// runtime/registry as a golden file, so that the API grows only by a
// reviewed diff. The count of lines is the exported-name count the issue
// tracks.
//
// An alias of a type in an internal package of the same module
// (type Ack = core.Ack, type Message[T any] = core.Message[T]) is listed
// as its line, type X = p.Y, followed by Y's exported fields, interface
// methods and methods under X's name, with p's types in their signatures
// named as the listed package names them (its own alias of the type, else
// p.Name): a user calls them through X, and go doc, which shows an alias
// as one line, would hide them. An alias of a type outside the module or
// in a package a user can import is one line, as before: that package's
// own documentation lists its members.
//
// GoDocEntries counts what go doc prints for a package.
package apilist

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
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
	files, err := parseFiles(fset, dir, pkg.GoFiles, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, f := range files {
		lines = append(lines, fileAPI(fset, f)...)
	}
	more, err := aliasMembers(dir, files)
	if err != nil {
		return nil, err
	}
	lines = append(lines, more...)
	sort.Strings(lines)
	return dedupe(lines), nil
}

// GoDocEntries counts the entries go doc -all prints for the package in
// dir, the measure the issues track: each exported type (an alias is one
// entry, as go doc shows it), each exported function (a constructor, a
// function returning the type that go doc lists under it, included) and
// each exported method of an exported type, one entry each: the lines of
// go doc -all that start with "type" or "func". Constants and variables
// are not counted (a const or var block is one entry for go doc, however
// many names it declares; api.txt counts the names).
func GoDocEntries(dir string) (int, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return 0, fmt.Errorf("apilist: %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	files, err := parseFiles(fset, dir, pkg.GoFiles, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	p, err := doc.NewFromFiles(fset, files, pkg.ImportPath)
	if err != nil {
		return 0, fmt.Errorf("apilist: %s: %w", dir, err)
	}
	n := len(p.Funcs)
	for _, t := range p.Types {
		n += 1 + len(t.Funcs) + len(t.Methods)
	}
	return n, nil
}

func parseFiles(fset *token.FileSet, dir string, names []string, mode parser.Mode) ([]*ast.File, error) {
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, mode)
		if err != nil {
			return nil, fmt.Errorf("apilist: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
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
