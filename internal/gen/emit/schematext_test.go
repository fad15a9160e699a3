package emit

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// A schema's text is a raw string when one can hold it, else quoted; a line
// of it too long for MaxLine is cut; either way the constant is the text,
// byte for byte, and no line of the file passes MaxLine.
func TestTextConst(t *testing.T) {
	long := `    {"name": "suit", "type": {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "DIAMONDS", "CLUBS"], "doc": "` +
		strings.Repeat("é", 150) + `"}},`
	tests := []struct {
		name, text string
		raw        bool
	}{
		{"lines", "{\n  \"type\": \"record\",\n  \"name\": \"R\"\n}", true},
		{"one line", `{"type": "string"}`, true},
		{"long line", "{\n" + long + "\n" + long + long + "\n}\n", true},
		{"long first line", long + "\n}", true},
		{"no space to cut at", strings.Repeat("x", 400), true},
		{"backquote", "{\n  \"doc\": \"a `code` span\"\n}", false},
		{"carriage return", "{\r\n  \"type\": \"string\"\r\n}", false},
		{"directive", "{\n//go:generate rm -rf /\n}", false},
		{"control", "{\"doc\": \"\x01\"}", false},
		{"long quoted", "`" + long + "\n" + long, false},
	}
	for _, tt := range tests {
		for _, name := range []string{"orderSchema", "a" + strings.Repeat("VeryLong", 14) + "Schema"} {
			f := jen.NewFile("p")
			textConst(f, name, tt.text)
			var buf bytes.Buffer
			if err := f.Render(&buf); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			src, err := Format(buf.Bytes())
			if err != nil {
				t.Fatalf("%s: %v\n%s", tt.name, err, buf.Bytes())
			}
			got, raw := constValue(t, src, name)
			if got != tt.text {
				t.Errorf("%s: the constant is %q, want %q\n%s", tt.name, got, tt.text, src)
			}
			if raw != tt.raw {
				t.Errorf("%s: raw string %v, want %v\n%s", tt.name, raw, tt.raw, src)
			}
			for i, l := range strings.Split(string(src), "\n") {
				if width(l) > MaxLine && !(i == 2 && strings.HasPrefix(l, "const a")) {
					t.Errorf("%s: line %d is %d columns:\n%s", tt.name, i+1, width(l), l)
				}
			}
		}
	}
}

// constValue evaluates the constant name of src, a string literal or a sum
// of them, and says whether its first literal is a raw string.
func constValue(t *testing.T, src []byte, name string) (string, bool) {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	raw := false
	first := true
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.BinaryExpr:
			walk(e.X)
			walk(e.Y)
		case *ast.BasicLit:
			if first {
				raw, first = strings.HasPrefix(e.Value, "`"), false
			}
			v, err := strconv.Unquote(e.Value)
			if err != nil {
				t.Fatal(err)
			}
			s.WriteString(v)
		default:
			t.Fatalf("unexpected %T", e)
		}
	}
	for _, d := range file.Decls {
		for _, sp := range d.(*ast.GenDecl).Specs {
			if vs := sp.(*ast.ValueSpec); vs.Names[0].Name == name {
				walk(vs.Values[0])
			}
		}
	}
	return s.String(), raw
}
