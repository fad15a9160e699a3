package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
	"github.com/acemq/acemq-go/runtime/registry"
)

const exampleOrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`

// A directory registry shared by two services: the index records subject,
// version and id; a second registry on the same directory (another process,
// or a restart) sees the same ids.
func ExampleNewDirectory() {
	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	reg, err := registry.NewDirectory(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	id, _ := reg.Register(ctx, "orders", exampleOrderV1)
	again, _ := registry.NewDirectory(dir)
	text, _ := again.Schema(ctx, id)
	entries, _ := again.Index()
	derived, _ := registry.SchemaID(exampleOrderV1)
	fmt.Println(text == exampleOrderV1, id == derived)
	fmt.Printf("%s version %d\n", entries[0].Subject, entries[0].Version)
	_, err = os.Stat(filepath.Join(dir, registry.DirectoryIndexFile))
	fmt.Println(err == nil)
	// Output:
	// true true
	// orders version 1
	// true
}

// A Confluent-compatible registry over HTTP (here the in-test server the
// project's tests use; in a service, the registry's URL, with Token or
// Username/Password and TLS as it needs).
func ExampleNewHTTP() {
	srv, err := confluenttest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	reg, err := registry.NewHTTP(registry.HTTPConfig{URL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	id, _ := reg.Register(ctx, "orders", exampleOrderV1)
	before := srv.Calls()
	again, _ := reg.Register(ctx, "orders", exampleOrderV1) // cached: no HTTP call
	fmt.Println(id, again, srv.Calls()-before)
	_, err = reg.Schema(ctx, 4242)
	fmt.Println(strings.Replace(err.Error(), srv.URL, "https://registry.example", 1))
	// Output:
	// 1 1 0
	// schema id 4242: schema registry https://registry.example: HTTP 404, error code 40403: Schema 4242 not found (acemq: schema not found)
}
