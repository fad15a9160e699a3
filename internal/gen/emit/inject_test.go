package emit_test

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/schema"
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

// A schema whose names and docs are hostile still gives code that parses,
// with no directive and no comment escape (TestRoundTrip also compiles,
// vets and runs it).
func TestHostileNamesAndDocs(t *testing.T) {
	src, err := gen(t, schema.JSONSchema, "Msg", `{"description":"a */ b\ngo:generate echo pwned\n//go:build ignore","type":"object",
		"required":["type","func","9lives","first-name","名前"],
		"properties":{"type":{"type":"string"},"func":{"type":"string"},"9lives":{"type":"string"},"first-name":{"type":"string"},"名前":{"type":"string"},"first_name":{"type":"string","description":"*/ func init() {}"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	f := checkSource(t, src)
	if len(f.Decls) != 1 {
		t.Errorf("want one declaration, got %d:\n%s", len(f.Decls), src)
	}
	assertHas(t, src,
		"// a * / b", "go:generate echo pwned",
		"Type string `json:\"type\"`", "Func string `json:\"func\"`", "X9lives string `json:\"9lives\"`",
		"FirstName string `json:\"first-name\"`", "X名前 string `json:\"名前\"`", "FirstName2 *string `json:\"first_name,omitempty\"`")
	src, err = gen(t, schema.Avro, "Msg", `{"type":"record","name":"type","doc":"*/\ngo:generate x","fields":[{"name":"func","type":"int","doc":"//go:noinline"},{"name":"Func","type":"int"},{"name":"_9","type":"int"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	checkSource(t, src)
	assertHas(t, src, "type Msg struct", "Func int32 `avro:\"func\" json:\"func\"`", "Func2 int32 `avro:\"Func\" json:\"Func\"`", "X9 int32")
}
