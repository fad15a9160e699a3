package generator_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/acemq/acemq-go/generator"
	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// svc is a service whose files are nowhere on disk: a JSON Schema with a
// $ref to a file of another directory, whose own $ref goes on to a third
// file, and an Avro schema given as an absolute path.
var svc = fstest.MapFS{
	"svc/acemq.yaml": {Data: []byte(`version: 1
package: svc
messages:
  OrderPlaced: {type: order.placed.v1, schema: schemas/order.json}
  Shipped: {type: shipped.v1, schema: /shared/avro/shipped.avsc}
exchanges:
  svc.orders: {type: topic}
queues:
  svc.orders.new:
    bindings: [{exchange: svc.orders, routing_key: "#"}]
    consumes: [OrderPlaced, Shipped]
publishers:
  Orders:
    exchange: svc.orders
    messages: {OrderPlaced: {routing_key: order.placed}, Shipped: {routing_key: shipped}}
`)},
	"svc/schemas/order.json": {Data: []byte(`{"type": "object", "properties": {"total": {"$ref": "../../shared/money.json"}}, "required": ["total"]}`)},
	"shared/money.json":      {Data: []byte(`{"type": "object", "properties": {"cents": {"type": "integer"}, "currency": {"$ref": "currency.json"}}}`)},
	"shared/currency.json":   {Data: []byte(`{"type": "string", "enum": ["EUR", "USD"]}`)},
	"shared/avro/shipped.avsc": {Data: []byte(`{"type": "record", "name": "Shipped", "namespace": "com.acme",
  "fields": [{"name": "order_id", "type": "string"}]}`)},
}

// counting counts the opens of each name, and fails a test that opens
// one twice.
type counting struct {
	fs.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *counting) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

func count(fsys fs.FS) *counting { return &counting{FS: fsys, opens: map[string]int{}} }

func (c *counting) readOnce(t *testing.T) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(c.opens)) {
		if n := c.opens[name]; n != 1 {
			t.Errorf("%s opened %d times; want once", name, n)
		}
	}
}

// The stages do no I/O: the whole pipeline runs on files that exist only
// in an fstest.MapFS, a $ref across directories and an absolute schema:
// path included.
func TestGenerateFromMapFS(t *testing.T) {
	for _, name := range []string{"/svc/acemq.yaml", "/shared/money.json", "/shared/avro/shipped.avsc"} {
		if _, err := os.Stat(name); err == nil {
			t.Fatalf("%s exists on this machine; the test needs it not to", name)
		}
	}
	files, err := generator.Generate(generator.Options{Manifest: "svc/acemq.yaml", FS: svc})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{}
	for _, f := range files {
		all[f.Path] = string(f.Content)
	}
	types := all["types.acemq.go"]
	for _, want := range []string{"type OrderPlaced struct", "Total Money", "type Money struct", "Currency *Currency", "type Shipped struct", "OrderID string"} {
		if !strings.Contains(types, want) {
			t.Errorf("types.acemq.go has no %q:\n%s", want, types)
		}
	}
	if !strings.Contains(all["messages.acemq.go"], `acemq-bundle:../shared/money.json`) {
		t.Errorf("messages.acemq.go does not bundle shared/money.json into OrderPlaced's schema:\n%s", all["messages.acemq.go"])
	}
}

// Each file is read once: the manifest, each schema file and the files of
// its $ref closure, whatever how many stages look at them; and only those.
func TestEachFileReadOnce(t *testing.T) {
	c := count(svc)
	if _, err := generator.Generate(generator.Options{Manifest: "svc/acemq.yaml", FS: c}); err != nil {
		t.Fatal(err)
	}
	c.readOnce(t)
	want := []string{"shared/avro/shipped.avsc", "shared/currency.json", "shared/money.json", "svc/acemq.yaml", "svc/schemas/order.json"}
	if got := slices.Sorted(maps.Keys(c.opens)); !slices.Equal(got, want) {
		t.Errorf("opened %q; want %q", got, want)
	}
}

// Every golden case, read from its directory through a counting file
// system: each file once, and the same result (files or errors) as from
// the manifest's path.
func TestGoldenCasesReadOnce(t *testing.T) {
	manifests, err := filepath.Glob("../golden/*/acemq.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range manifests {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			c := count(os.DirFS(filepath.Dir(path)))
			got, gotErr := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: c, OutDir: "."})
			c.readOnce(t)
			want, wantErr := generator.Generate(generator.Options{Manifest: path})
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("from an fs.FS: %v; from a path: %v", gotErr, wantErr)
			}
			if wantErr != nil {
				// The manifest is named as given.
				w := strings.ReplaceAll(wantErr.Error(), path, "acemq.yaml")
				// And an imported manifest beside it (golden/imports) by its path from there.
				w = strings.ReplaceAll(w, filepath.Dir(path)+string(filepath.Separator), "")
				if gotErr.Error() != w {
					t.Errorf("from an fs.FS:\n%s\nfrom a path:\n%s", gotErr, w)
				}
				return
			}
			if len(got) != len(want) {
				t.Fatalf("%d files from an fs.FS, %d from a path", len(got), len(want))
			}
			for i := range got {
				if got[i].Path != want[i].Path || string(got[i].Content) != string(want[i].Content) {
					t.Errorf("%s differs from an fs.FS", want[i].Path)
				}
			}
		})
	}
}

// A missing schema file in an fs.FS is reported as from disk, at its
// schema: value, with the did-you-mean of its directory's listing (read
// once too).
func TestMissingSchemaInMapFS(t *testing.T) {
	fsys := fstest.MapFS{
		"acemq.yaml": {Data: []byte("version: 1\npackage: p\nmessages:\n  A: {type: a, schema: s/a.jsno}\n")},
		"s/a.json":   {Data: []byte(`{"type": "object"}`)},
	}
	c := count(fsys)
	_, err := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: c})
	var errs manifest.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v; want manifest.Errors", err)
	}
	want := `acemq.yaml:4:24: message "A": schema file "s/a.jsno" does not exist (did you mean "s/a.json"?)`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	c.readOnce(t)
	if got := slices.Sorted(maps.Keys(c.opens)); !slices.Equal(got, []string{"acemq.yaml", "s", "s/a.jsno"}) {
		t.Errorf("opened %q; want the manifest, the missing file and its directory", got)
	}
}

// A missing schema file given as an absolute path gets the did-you-mean
// of its own directory (it was told that the directory did not exist: the
// directory was looked for under the manifest's).
func TestMissingAbsoluteSchema(t *testing.T) {
	fsys := fstest.MapFS{
		"svc/acemq.yaml": {Data: []byte("version: 1\npackage: p\nmessages:\n  A: {type: a, schema: /shared/a.jsno}\n  B: {type: b, schema: /nowhere/b.json}\n")},
		"shared/a.json":  {Data: []byte(`{"type": "object"}`)},
	}
	_, err := generator.Generate(generator.Options{Manifest: "svc/acemq.yaml", FS: fsys})
	want := `svc/acemq.yaml:4:24: message "A": schema file "/shared/a.jsno" does not exist (did you mean "/shared/a.json"?)
svc/acemq.yaml:5:24: message "B": schema file "/nowhere/b.json" does not exist (and neither does the directory "/nowhere")`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
