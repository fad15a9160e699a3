package apilist

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// alias is an exported alias of a type in an internal package of the
// module: type Name = pkg.Target (or Name[P] = pkg.Target[P]).
type alias struct {
	name   string
	path   string // the import path of pkg
	target string
}

// aliasMembers lists, for every alias in files of a type in an internal
// package of the module dir is in, the target type's exported fields,
// interface methods and methods under the alias's name.
func aliasMembers(dir string, files []*ast.File) ([]string, error) {
	var aliases []alias
	for _, f := range files {
		aliases = append(aliases, internalAliases(f)...)
	}
	if len(aliases) == 0 {
		return nil, nil
	}
	mod, root, err := module(dir)
	if err != nil {
		return nil, err
	}
	// What the listed package calls each aliased type: a signature of a
	// member names the type by its alias where there is one.
	names := map[string]string{} // import path + " " + target → alias
	for _, a := range aliases {
		names[a.path+" "+a.target] = a.name
	}
	var lines []string
	pkgs := map[string]*target{}
	for _, a := range aliases {
		if a.path != mod && !strings.HasPrefix(a.path, mod+"/") {
			continue // outside the module: its own package lists it
		}
		t, ok := pkgs[a.path]
		if !ok {
			t, err = parseTarget(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(a.path, mod))), a.path, names)
			if err != nil {
				return nil, err
			}
			pkgs[a.path] = t
		}
		more, err := t.members(a)
		if err != nil {
			return nil, err
		}
		lines = append(lines, more...)
	}
	return lines, nil
}

// internalAliases is f's exported aliases of types in internal packages
// (an import path with an "internal" element).
func internalAliases(f *ast.File) []alias {
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	var out []alias
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.TYPE {
			continue
		}
		for _, spec := range d.Specs {
			s := spec.(*ast.TypeSpec)
			if !s.Assign.IsValid() || !s.Name.IsExported() {
				continue
			}
			sel, ok := unindex(s.Type).(*ast.SelectorExpr)
			if !ok {
				continue
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				continue
			}
			path, ok := imports[pkg.Name]
			if !ok || !strings.Contains("/"+path+"/", "/internal/") {
				continue
			}
			out = append(out, alias{name: s.Name.Name, path: path, target: sel.Sel.Name})
		}
	}
	return out
}

// unindex is e without its type arguments: p.T[A, B] is p.T.
func unindex(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.IndexExpr:
		return t.X
	case *ast.IndexListExpr:
		return t.X
	}
	return e
}

// module is the module path and root directory of the module dir is in.
func module(dir string) (path, root string, err error) {
	root, err = filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("apilist: %w", err)
	}
	for {
		f, err := os.Open(filepath.Join(root, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return strings.Trim(strings.TrimSpace(rest), `"`), root, nil
				}
			}
			return "", "", fmt.Errorf("apilist: %s: no module line", filepath.Join(root, "go.mod"))
		}
		up := filepath.Dir(root)
		if up == root {
			return "", "", fmt.Errorf("apilist: %s: no go.mod above it", dir)
		}
		root = up
	}
}

// target is an internal package whose types are aliased, parsed, with
// its types renamed in every signature as the listing package names them.
type target struct {
	fset  *token.FileSet
	path  string
	types map[string]*ast.TypeSpec
	// methods of each type, by the type's name.
	methods map[string][]*ast.FuncDecl
}

func parseTarget(dir, path string, names map[string]string) (*target, error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("apilist: %s: %w", path, err)
	}
	t := &target{fset: token.NewFileSet(), path: path, types: map[string]*ast.TypeSpec{}, methods: map[string][]*ast.FuncDecl{}}
	files := make([]*ast.File, 0, len(pkg.GoFiles))
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(t.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apilist: %w", err)
		}
		files = append(files, f)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if s, ok := spec.(*ast.TypeSpec); ok {
						t.types[s.Name.Name] = s
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.IsExported() {
					base := baseName(d.Recv.List[0].Type)
					t.methods[base] = append(t.methods[base], d)
				}
			}
		}
	}
	// Rename p's types in the member signatures: T is the listing
	// package's alias of p.T, else p.T.
	rename := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				return false // another package's name (qualified below)
			case *ast.Ident:
				if _, ok := t.types[x.Name]; ok {
					if a, ok := names[path+" "+x.Name]; ok {
						x.Name = a
					} else {
						x.Name = pkg.Name + "." + x.Name
					}
				}
			}
			return true
		})
	}
	// imports are the current file's import names → paths; a type of
	// another internal package that the listing package aliases (core.T
	// aliased as T) is named by its alias.
	var imports map[string]string
	var qualify func(e ast.Expr) ast.Expr
	qualify = func(e ast.Expr) ast.Expr {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if a, ok := names[imports[id.Name]+" "+x.Sel.Name]; ok {
					return ast.NewIdent(a)
				}
			}
		case *ast.StarExpr:
			x.X = qualify(x.X)
		case *ast.ArrayType:
			x.Elt = qualify(x.Elt)
		case *ast.MapType:
			x.Key, x.Value = qualify(x.Key), qualify(x.Value)
		case *ast.Ellipsis:
			x.Elt = qualify(x.Elt)
		case *ast.ChanType:
			x.Value = qualify(x.Value)
		case *ast.IndexExpr:
			x.X, x.Index = qualify(x.X), qualify(x.Index)
		case *ast.IndexListExpr:
			x.X = qualify(x.X)
			for i := range x.Indices {
				x.Indices[i] = qualify(x.Indices[i])
			}
		case *ast.FuncType:
			for _, l := range []*ast.FieldList{x.Params, x.Results} {
				if l != nil {
					for _, f := range l.List {
						f.Type = qualify(f.Type)
					}
				}
			}
		}
		return e
	}
	renameFields := func(l *ast.FieldList) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			f.Type = qualify(f.Type)
			rename(f.Type)
		}
	}
	for _, f := range files {
		imports = map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			imports[n] = p
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					renameFields(d.Recv)
					renameFields(d.Type.Params)
					renameFields(d.Type.Results)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					s, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					switch st := s.Type.(type) {
					case *ast.StructType:
						renameFields(st.Fields)
					case *ast.InterfaceType:
						for _, m := range st.Methods.List {
							m.Type = qualify(m.Type)
							rename(m.Type)
						}
					}
				}
			}
		}
	}
	return t, nil
}

// members is the lines of a's target's exported fields, interface
// methods and methods, under a's name.
func (t *target) members(a alias) ([]string, error) {
	s, ok := t.types[a.target]
	if !ok {
		return nil, fmt.Errorf("apilist: alias %s: %s has no type %s", a.name, t.path, a.target)
	}
	var lines []string
	switch st := s.Type.(type) {
	case *ast.StructType:
		for _, f := range st.Fields.List {
			typ := node(t.fset, f.Type)
			if len(f.Names) == 0 {
				// baseName is core.Meta once renamed: its exported part is Meta.
				base := baseName(f.Type)
				if ast.IsExported(base[strings.LastIndex(base, ".")+1:]) {
					lines = append(lines, "field "+a.name+" embedded "+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					lines = append(lines, "field "+a.name+"."+n.Name+" "+typ)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range st.Methods.List {
			if len(m.Names) == 0 {
				lines = append(lines, "imethod "+a.name+" embedded "+node(t.fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					lines = append(lines, "imethod "+a.name+"."+n.Name+strings.TrimPrefix(node(t.fset, m.Type), "func"))
				}
			}
		}
	}
	for _, d := range t.methods[a.target] {
		recv := node(t.fset, d.Recv.List[0].Type)
		sig := node(t.fset, d.Type)[len("func"):]
		lines = append(lines, "method ("+recv+") "+d.Name.Name+sig)
	}
	return lines, nil
}
