package emit_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/schema"
)

// TestRoundTrip generates the types of testdata/roundtrip/*.avsc and
// names.json into one package, vets it, and runs the tests of
// testdata/roundtrip beside them: hamba/avro marshals and unmarshals every
// Avro construct (records, nesting, recursion, enums, fixed, arrays, maps,
// nullable and general unions, logical types) and encoding/json keeps the
// same value; names.json (keywords, digits, dashes, unicode, hostile doc
// text) gives types whose JSON the reference validator accepts; and the
// runtime's own Avro codec carries the generated types, unions included.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test module")
	}
	dir := "testdata/roundtrip"
	roots := map[string]string{
		"names.json": "Names", "strings.avsc": "Strings",
		"order.avsc": "Order", "event.avsc": "Event", "maybe.avsc": "MaybePong",
		"rank.avsc": "Rank", "id.avsc": "Ident", "when.avsc": "When",
	}
	files := map[string]string{}
	var inputs []schema.Input
	for _, name := range []string{"names.json", "order.avsc", "event.avsc", "maybe.avsc", "strings.avsc", "rank.avsc", "id.avsc", "when.avsc"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join("rt", name)] = string(data)
		format := schema.Avro
		if filepath.Ext(name) == ".json" {
			format = schema.JSONSchema
		}
		inputs = append(inputs, schema.Input{Message: roots[name], GoName: roots[name], Path: name, Dir: dir, Data: data, Format: format})
	}
	u, err := schema.Build(inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := render("rt", u)
	if err != nil {
		t.Fatal(err)
	}
	f := checkSource(t, src)
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "panic" {
			t.Errorf("schema text escaped its comment:\n%s", src)
		}
		return true
	})
	for _, name := range []string{"avro_roundtrip_test.go", "json_roundtrip_test.go", "runtime_codec_test.go"} {
		test, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files["rt/"+name] = string(test)
	}
	files["rt/types.go"] = src
	mod := writeModule(t, files)
	if out, err := goCmd(mod, "vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s\n%s", err, out, src)
	}
	if out, err := goCmd(mod, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("round trip: %v\n%s\n%s", err, out, src)
	}
}
