package schema_test

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/generator/emit"
	"github.com/acemq/acemq-go/generator/schema"
	"github.com/dave/jennifer/jen"
)

// A schema path or a $defs key holding a line break can neither end the
// doc comment of a type it names nor split an error over several lines.
func TestPathAndPointerCannotEscape(t *testing.T) {
	path := "x\n*/\nfunc init() { println(\"pwned\") }\n/*y.json"
	text := `{"type": "object", "properties": {
		"a": {"$ref": "#/$defs/k%0A*~1%20func%20init()%20{}"},
		"e": {"enum": ["p", "q"]}},
		"$defs": {"k\n*/ func init() {}": {"type": "object", "properties": {"z": {"type": "string"}}}}}`
	u, err := schema.Build([]schema.Input{{Message: "M", GoName: "M", Path: path, Dir: t.TempDir(),
		Data: []byte(text), Format: schema.JSONSchema}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := render("p", u)
	if err != nil {
		t.Fatal(err)
	}
	noFunc(t, src)
	for _, want := range []string{
		`// M is the object at # in "x\n* /\nfunc init() { println(\"pwned\") }\n/ *y.json".`,
		`// MKFuncInit is the object at "#/$defs/k\n*~1 func init() {}" in "x\n`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %s:\n%s", want, src)
		}
	}

	// The emitter makes any doc line safe, whoever built it.
	u.Types[0].Doc = []string{"a\n*/ func init() {}\n/* b"}
	g := jen.NewFile("p")
	emit.Types(g, u)
	src = g.GoString()
	noFunc(t, src)
	if !strings.Contains(src, "// a\n//   - / func init() {}\n") {
		t.Errorf("the doc lines were not split and escaped:\n%s", src)
	}
}

// noFunc fails when src declares a function or has a /* */ comment.
func noFunc(t *testing.T, src string) {
	t.Helper()
	for _, d := range checkSource(t, src).Decls {
		if _, ok := d.(*ast.FuncDecl); ok {
			t.Errorf("the generated code declares a function:\n%s", src)
		}
	}
}

func TestErrorIsOneLine(t *testing.T) {
	e := &schema.Error{Path: "a\nb.json", Pointer: "#/$defs/k\n", Construct: "$ref", Msg: "bad\nthing"}
	if got, want := e.Error(), `"a\nb.json": "#/$defs/k\n": bad\nthing`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	e = &schema.Error{Path: "s/a.json", Pointer: "#/properties/x", Msg: "m"}
	if got, want := e.Error(), "s/a.json: #/properties/x: m"; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}
