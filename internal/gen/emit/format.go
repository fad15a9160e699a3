package emit

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// Format is src, a rendered file, formatted as gofmt and goimports write
// it: the imports in two groups, the standard library first, then a blank
// line and the rest (jennifer writes one sorted block), so that gopls's
// format-on-save and golangci-lint's goimports leave generated files alone.
func Format(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var decl *ast.GenDecl
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Lparen.IsValid() {
			decl = g
			break
		}
	}
	if decl == nil {
		return format.Source(src)
	}
	var std, other []string
	for _, s := range decl.Specs {
		is := s.(*ast.ImportSpec)
		line := is.Path.Value
		if is.Name != nil {
			line = is.Name.Name + " " + line
		}
		path := strings.Trim(is.Path.Value, `"`)
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	byPath := func(lines []string) {
		sort.Slice(lines, func(i, j int) bool { return importPath(lines[i]) < importPath(lines[j]) })
	}
	byPath(std)
	byPath(other)
	var b bytes.Buffer
	b.WriteString("import (\n")
	for _, l := range std {
		b.WriteString("\t" + l + "\n")
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteString("\n")
	}
	for _, l := range other {
		b.WriteString("\t" + l + "\n")
	}
	b.WriteString(")")
	start, end := fset.Position(decl.Pos()).Offset, fset.Position(decl.End()).Offset
	out := append(append(append([]byte{}, src[:start]...), b.Bytes()...), src[end:]...)
	return format.Source(out)
}

func importPath(line string) string {
	return line[strings.Index(line, `"`):]
}
