package generator_test

import (
	"errors"
	"fmt"
	"testing/fstest"

	"github.com/acemq/acemq-go/generator"
)

func ExampleGenerate() {
	svc := fstest.MapFS{
		"acemq.yaml": {Data: []byte(`version: 1
package: orders
messages:
  OrderPlaced: {type: order.placed.v1, schema: order.json}
exchanges:
  orders: {type: topic}
queues:
  orders.new:
    bindings: [{exchange: orders, routing_key: "#"}]
    consumes: [OrderPlaced]
publishers:
  Orders:
    exchange: orders
    messages: {OrderPlaced: {routing_key: order.placed}}
`)},
		"order.json": {Data: []byte(`{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}`)},
	}
	files, err := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: svc})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Path)
	}
	// Output:
	// types.acemq.go
	// checks.acemq.go
	// codec.acemq.go
	// messages.acemq.go
	// policies.acemq.go
	// topology.acemq.go
	// publishers.acemq.go
	// consumers.acemq.go
}

func ExampleErrors() {
	svc := fstest.MapFS{"acemq.yaml": {Data: []byte("version: 1\npackage: orders\nmessages:\n  OrderPlaced: {type: order.placed.v1}\n")}}
	_, err := generator.Generate(generator.Options{Manifest: "acemq.yaml", FS: svc})
	var errs generator.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Printf("line %d: %s\n", e.Pos.Line, e.Msg)
		}
	}
	// Output: line 4: message "OrderPlaced" is missing "schema"
}
