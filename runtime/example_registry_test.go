package runtime_test

import (
	"fmt"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
)

const exampleOrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`

// SchemaID is the same in every process: the default registry's ids need
// no shared state.
func ExampleSchemaID() {
	id, _ := registry.SchemaID(exampleOrderV1)
	respelled, _ := registry.SchemaID(`{"name": "Order", "type": "record", "doc": "an order",
		"fields": [{"type": "string", "name": "id"}]}`)
	fmt.Println(id == respelled, id > 0)
	// Output: true true
}

// What generated code does with the manifest's registry:, by hand: a
// registry opened on first use, given to each Avro type.
func ExampleNewAvroType_registry() {
	reg := registry.OpenLazy(registry.Config{Directory: "${ORDERS_REGISTRY_DIR}"})
	orders := runtime.NewAvroType[struct {
		ID string `avro:"id"`
	}]("order.placed.v1", "orders", exampleOrderV1, runtime.WithSchemaRegistry(reg))
	fmt.Println(orders.Name(), orders.Format())
	// Output: order.placed.v1 avro
}
