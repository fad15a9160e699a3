package export_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/export"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// Render writes a manifest's topology in one of the formats; here the
// queues of the orders example's definitions file, whose arguments are
// those Declare gives them.
func ExampleRender() {
	m, err := pipeline.Load("../../../examples/orders/acemq.yaml")
	if err != nil {
		log.Fatal(err)
	}
	defs, err := export.Render(m, "definitions", export.Options{Vhost: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(defs), "\n") {
		if strings.Contains(line, `"name": "orders.new`) || strings.Contains(line, "x-dead-letter") {
			fmt.Println(strings.TrimSpace(line))
		}
	}
	// Output:
	// "name": "orders.new",
	// "x-dead-letter-exchange": "acemq.dlx",
	// "x-dead-letter-routing-key": "orders.new.dlq"
	// "name": "orders.new.dlq",
	// "name": "orders.new.parked",
	// "name": "orders.new.retry.1s",
	// "x-dead-letter-exchange": "",
	// "x-dead-letter-routing-key": "orders.new",
	// "name": "orders.new.retry.2s",
	// "x-dead-letter-exchange": "",
	// "x-dead-letter-routing-key": "orders.new",
	// "name": "orders.new.retry.4s",
	// "x-dead-letter-exchange": "",
	// "x-dead-letter-routing-key": "orders.new",
}
