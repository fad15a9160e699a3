// Command avroproc is a publisher or a consumer of Avro orders in a process
// of its own, for the runtime's cross-process tests
// (TestAvroBetweenTwoProcesses): what two services built from one manifest
// do, with nothing shared but the broker and, when -registry is given, a
// directory registry.
//
//	avroproc -role publish -url URL -queue Q -schema v1|v2|v3 [-registry DIR | -registry-url URL] -n N
//	avroproc -role consume -url URL -queue Q -schema v1|v2 [-registry DIR | -registry-url URL] -n N
//
// The consumer prints each payload as a JSON line and exits after N.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
)

const (
	v1 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"}]}`
	v2 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},
		{"name":"currency","type":"string","default":"EUR"}]}`
	// v3 is v1 with a nullable field added, the newcomer's evolution
	// (issue 37): acemq-gen compat calls it compatible both ways.
	v3 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},
		{"name":"note","type":["null","string"],"default":null}]}`
)

// Order is both versions' Go type (v1 ignores Currency).
type Order struct {
	ID       string `avro:"id" json:"id"`
	Currency string `avro:"currency" json:"currency,omitempty"`
}

type OrderV1 struct {
	ID string `avro:"id" json:"id"`
}

type OrderV3 struct {
	ID   string  `avro:"id" json:"id"`
	Note *string `avro:"note" json:"note,omitempty"`
}

func main() {
	role := flag.String("role", "", "publish or consume")
	url := flag.String("url", "", "broker URL")
	queue := flag.String("queue", "", "queue")
	schema := flag.String("schema", "v1", "v1, v2 or v3 (v3 publishes only)")
	dir := flag.String("registry", "", "a directory registry (default: none configured)")
	regURL := flag.String("registry-url", "", "a Confluent-compatible registry (default: none configured)")
	n := flag.Int("n", 1, "messages")
	flag.Parse()
	if err := run(*role, *url, *queue, *schema, *dir, *regURL, *n); err != nil {
		fmt.Fprintln(os.Stderr, "avroproc:", err)
		os.Exit(1)
	}
}

func run(role, url, queue, schema, dir, regURL string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var opts []runtime.TypeOption
	if dir != "" {
		// As generated code does for a manifest's registry: {directory: DIR}.
		opts = append(opts, runtime.WithSchemaRegistry(registry.OpenLazy(registry.Config{Directory: dir})))
	}
	if regURL != "" {
		opts = append(opts, runtime.WithSchemaRegistry(registry.OpenLazy(registry.Config{URL: regURL})))
	}
	c, err := runtime.Dial(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	switch role {
	case "publish":
		for i := range n {
			id := fmt.Sprintf("A-%d", i+1)
			switch schema {
			case "v1":
				err = runtime.Publish(ctx, c, runtime.NewAvroType[OrderV1]("shop.order", "orders", v1, opts...), "", OrderV1{ID: id}, runtime.WithRoutingKey(queue))
			case "v3":
				note := "leave at the door"
				err = runtime.Publish(ctx, c, runtime.NewAvroType[OrderV3]("shop.order", "orders", v3, opts...), "", OrderV3{ID: id, Note: &note}, runtime.WithRoutingKey(queue))
			default:
				err = runtime.Publish(ctx, c, runtime.NewAvroType[Order]("shop.order", "orders", v2, opts...), "", Order{ID: id, Currency: "USD"}, runtime.WithRoutingKey(queue))
			}
			if err != nil {
				return err
			}
		}
		return nil
	case "consume":
		text := v1
		if schema == "v2" {
			text = v2
		}
		got := make(chan Order, n)
		cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: queue, Routes: []runtime.Route{
			runtime.Handle(runtime.NewAvroType[Order]("shop.order", "orders", text, opts...), func(_ context.Context, m *runtime.Message[Order]) runtime.Ack {
				got <- m.Payload
				return runtime.Accept()
			}),
		}})
		if err != nil {
			return err
		}
		defer cs.Close(context.Background())
		enc := json.NewEncoder(os.Stdout)
		for range n {
			select {
			case o := <-got:
				if err := enc.Encode(o); err != nil {
					return err
				}
			case <-ctx.Done():
				return fmt.Errorf("waiting for messages: %w", ctx.Err())
			}
		}
		return nil
	}
	return fmt.Errorf("-role %q: want publish or consume", role)
}
