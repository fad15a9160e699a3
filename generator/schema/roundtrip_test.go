package schema_test

import (
	"go/ast"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/generator/schema"
)

// TestAvroRoundTrip generates the types of testdata/roundtrip/*.avsc into
// one package, and runs testdata/roundtrip/avro_roundtrip_test.go beside
// them: hamba/avro marshals and unmarshals every construct (records,
// nesting, recursion, enums, fixed, arrays, maps, nullable and general
// unions, logical types) and encoding/json keeps the same value.
func TestAvroRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test module")
	}
	dir := "testdata/roundtrip"
	roots := map[string]string{
		"order.avsc": "Order", "event.avsc": "Event", "maybe.avsc": "MaybePong",
		"names.avsc": "Names", "rank.avsc": "Rank", "id.avsc": "Ident", "when.avsc": "When",
	}
	files := map[string]string{}
	var inputs []schema.Input
	for _, name := range []string{"order.avsc", "event.avsc", "maybe.avsc", "names.avsc", "rank.avsc", "id.avsc", "when.avsc"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join("rt", name)] = string(data)
		inputs = append(inputs, schema.Input{Message: roots[name], GoName: roots[name], Path: name, Dir: dir, Data: data, Format: schema.Avro})
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
	test, err := os.ReadFile(filepath.Join(dir, "avro_roundtrip_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	files["rt/types.go"] = src
	files["rt/avro_roundtrip_test.go"] = string(test)
	mod := writeModule(t, files)
	if out, err := goCmd(mod, "vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s\n%s", err, out, src)
	}
	if out, err := goCmd(mod, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("round trip: %v\n%s\n%s", err, out, src)
	}
}
