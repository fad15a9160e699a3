package main

import (
	"context"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
)

// The typed sides' publishes, one per format (env.go): the generated
// publisher for "avro" and "json", the runtime's own functions with the
// generated Avro type for the quorum queue and with the runtime-only JSON
// type for "jsonref", all to the bench exchange.

func (e *env) publishOne(ctx context.Context, format string) error {
	p := e.publisher
	switch format {
	case "avro":
		return p.PublishOrderAvro(ctx, e.avroValue)
	case "json":
		return p.PublishOrderJSON(ctx, e.jsonValue)
	}
	key := runtime.WithRoutingKey(routingKey(format))
	switch format {
	case formatJSONRef:
		return runtime.Publish(ctx, e.conn, orders.ReferenceOrderJSONType(), "bench", e.jsonValue, key)
	}
	return runtime.Publish(ctx, e.conn, orders.TypeOfOrderAvro(), "bench", e.avroValue, key)
}

func (e *env) publishAsyncOne(ctx context.Context, format string) (*runtime.Pending, error) {
	p := e.publisher
	switch format {
	case "avro":
		return p.PublishOrderAvroAsync(ctx, e.avroValue)
	case "json":
		return p.PublishOrderJSONAsync(ctx, e.jsonValue)
	}
	key := runtime.WithRoutingKey(routingKey(format))
	switch format {
	case formatJSONRef:
		return runtime.PublishAsync(ctx, e.conn, orders.ReferenceOrderJSONType(), "bench", e.jsonValue, key)
	}
	return runtime.PublishAsync(ctx, e.conn, orders.TypeOfOrderAvro(), "bench", e.avroValue, key)
}

// publishBatch publishes k messages of format in one PublishBatch.
func (e *env) publishBatch(ctx context.Context, format string, k int) error {
	p := orders.NewBenchPublisher(e.conn)
	key := runtime.WithRoutingKey(routingKey(format))
	if bodyOf(format) == "json" {
		js := make([]orders.OrderJSON, k)
		for i := range js {
			js[i] = e.jsonValue
		}
		if format == formatJSONRef {
			return runtime.PublishBatch(ctx, e.conn, orders.ReferenceOrderJSONType(), "bench", js, key)
		}
		return p.PublishOrderJSONBatch(ctx, js)
	}
	as := make([]orders.OrderAvro, k)
	for i := range as {
		as[i] = e.avroValue
	}
	if format == formatAvroQuorum {
		return runtime.PublishBatch(ctx, e.conn, orders.TypeOfOrderAvro(), "bench", as, key)
	}
	return p.PublishOrderAvroBatch(ctx, as)
}

// consume starts the typed consumer of format's queue (prefetch 256,
// concurrency 1, and mws) with h.
func (e *env) consume(ctx context.Context, format string, h *countingHandler, mws ...runtime.Middleware) (*runtime.Consumer, error) {
	opts := []runtime.ConsumeOption{runtime.WithPrefetch(256)}
	if len(mws) > 0 {
		opts = append(opts, runtime.WithMiddleware(mws...))
	}
	switch format {
	case "avro":
		return orders.ConsumeBenchAvro(ctx, e.conn, h, opts...)
	case "json":
		return orders.ConsumeBenchJSON(ctx, e.conn, h, opts...)
	case formatAvroQuorum:
		return orders.ConsumeBenchQAvro(ctx, e.conn, h, opts...)
	}
	spec := runtime.ConsumerSpec{Queue: queueJSON,
		Routes: []runtime.Route{runtime.Handle(orders.ReferenceOrderJSONType(), h.HandleOrderJSON)}}
	return runtime.Consume(ctx, e.conn, spec, opts...)
}
