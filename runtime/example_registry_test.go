package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
)

const exampleOrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`

// SchemaID is the same in every process: the default registry's ids need
// no shared state.
func ExampleSchemaID() {
	id, _ := runtime.SchemaID(exampleOrderV1)
	respelled, _ := runtime.SchemaID(`{"name": "Order", "type": "record", "doc": "an order",
		"fields": [{"type": "string", "name": "id"}]}`)
	fmt.Println(id == respelled, id > 0)
	// Output: true true
}

// A directory registry shared by two services: the index records subject,
// version and id; a second registry on the same directory (another process,
// or a restart) sees the same ids.
func ExampleNewDirectoryRegistry() {
	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	reg, err := runtime.NewDirectoryRegistry(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	id, _ := reg.Register(ctx, "orders", exampleOrderV1)
	again, _ := runtime.NewDirectoryRegistry(dir)
	text, _ := again.Schema(ctx, id)
	entries, _ := again.Index()
	derived, _ := runtime.SchemaID(exampleOrderV1)
	fmt.Println(text == exampleOrderV1, id == derived)
	fmt.Printf("%s version %d\n", entries[0].Subject, entries[0].Version)
	_, err = os.Stat(filepath.Join(dir, runtime.DirectoryIndexFile))
	fmt.Println(err == nil)
	// Output:
	// true true
	// orders version 1
	// true
}

// A Confluent-compatible registry over HTTP (here the in-test server the
// project's tests use; in a service, the registry's URL, with Token or
// Username/Password and TLS as it needs).
func ExampleNewHTTPRegistry() {
	srv, err := confluenttest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	reg, err := runtime.NewHTTPRegistry(runtime.HTTPRegistryConfig{URL: srv.URL})
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

// What generated code does with the manifest's registry:, by hand: a
// registry opened on first use, given to each Avro type.
func ExampleTypeRegistry() {
	reg := runtime.ConfiguredRegistry(runtime.RegistryConfig{Directory: "${ORDERS_REGISTRY_DIR}"})
	orders := runtime.AvroType[struct {
		ID string `avro:"id"`
	}]("order.placed.v1", "orders", exampleOrderV1, runtime.TypeRegistry(reg))
	fmt.Println(orders.Name(), orders.Format())
	// Output: order.placed.v1 avro
}
