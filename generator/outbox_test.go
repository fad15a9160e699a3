package generator_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/acemq/acemq-go/generator"
)

// A package imports pgstore and pgx only when a publisher asks for an
// outbox, and then only from outbox.acemq.go: a service without one never
// gets the PostgreSQL driver.
func TestOnlyAnOutboxImportsPgstore(t *testing.T) {
	const manifest = `version: 1
package: shop
messages:
  Order: {type: shop.order.v1, schema: order.json}
exchanges:
  shop: {type: topic}
queues:
  shop.orders:
    bindings: [{exchange: shop, routing_key: order}]
    consumes: [Order]
publishers:
  Shop:
    exchange: shop
    messages: {Order: {routing_key: order}}
`
	for _, withOutbox := range []bool{false, true} {
		dir := t.TempDir()
		src := manifest
		if withOutbox {
			src += "    outbox: true\n"
		}
		write(t, filepath.Join(dir, "acemq.yaml"), src)
		write(t, filepath.Join(dir, "order.json"), `{"type": "object", "properties": {"id": {"type": "string"}}}`)
		files, err := generator.Generate(generator.Options{Manifest: filepath.Join(dir, "acemq.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		sawOutbox := false
		for _, f := range files {
			parsed, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Content, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if (path == "github.com/acemq/acemq-go/pgstore" || path == "github.com/jackc/pgx/v5") && f.Path != "outbox.acemq.go" {
					t.Errorf("outbox %v: %s imports %s", withOutbox, f.Path, path)
				}
			}
			if f.Path == "outbox.acemq.go" {
				sawOutbox = true
				if len(parsed.Imports) != 5 {
					t.Errorf("outbox.acemq.go imports %d packages, want context, pgstore, runtime, acemqimpl, pgx", len(parsed.Imports))
				}
			}
		}
		if sawOutbox != withOutbox {
			t.Errorf("outbox: %v, outbox.acemq.go written: %v", withOutbox, sawOutbox)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
