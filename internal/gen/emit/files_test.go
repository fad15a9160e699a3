package emit

import (
	"bytes"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// Manifest text in a doc comment can neither close the comment, nor start
// a directive, nor a raw comment that jennifer would print as is, whatever
// column the wrap puts it at.
func TestDocCannotEscape(t *testing.T) {
	hostile := "x */ y\n//go:generate rm -rf /\r\n/* z"
	for pad := range 80 {
		f := jen.NewFile("p")
		doc(f.Comment, "%s publishes %q to %q.", strings.Repeat("w", pad), hostile, "//go:build ignore")
		f.Var().Id("X").Op("=").Lit(1)
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), "p.go", buf.Bytes(), parser.ParseComments)
		if err != nil {
			t.Fatalf("pad %d: %v\n%s", pad, err, buf.String())
		}
		if len(parsed.Decls) != 1 || len(parsed.Comments) != 1 {
			t.Fatalf("pad %d: %d declarations, %d comment groups:\n%s", pad, len(parsed.Decls), len(parsed.Comments), buf.String())
		}
		for _, c := range parsed.Comments[0].List {
			if !strings.HasPrefix(c.Text, "// ") || strings.HasPrefix(c.Text, "//go:") {
				t.Errorf("pad %d: comment line %q", pad, c.Text)
			}
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc //go:x ddd", 8)
	want := []string{"aaa bbb", "ccc //go:x", "ddd"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
