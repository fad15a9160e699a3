package main

import (
	"context"
	"testing"
	"time"

	"github.com/acemq/acemq-go/examples/shipping"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// Two services, one contract: orders publishes OrderPlaced through its own
// generated publisher, and shipping (examples/shipping), whose manifest
// imports orders' (imports: [{path: ../orders/acemq.yaml}]), consumes it
// from a queue of its own bound to orders' exchange, with orders' schema.
// Shipping starts first, so its Topology creates orders' exchange; orders'
// declares it again, unchanged. A-1 becomes a ShipmentScheduled on
// shipping's exchange; A-2 has no customer id and is dead-lettered on
// shipping's own DLQ with the handler's reason; orders' queue still holds
// its own copy of both.
func TestShippingConsumesWhatOrdersPublishes(t *testing.T) {
	url := acemqtest.VHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := runtime.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	consumer, err := shipping.Start(ctx, conn)
	if err != nil {
		t.Fatalf("shipping, started first: %v", err)
	}
	defer consumer.Close(context.Background())
	if err := conn.Declare(ctx, Topology()); err != nil {
		t.Fatalf("orders' topology after shipping's (the same exchange declared twice): %v", err)
	}
	seen := runtime.NewTopology().Queue(runtime.Queue{Name: "test.shipments"}).Bind("test.shipments", "shipping", "shipment.scheduled")
	if err := conn.Declare(ctx, seen); err != nil {
		t.Fatal(err)
	}
	customer := "C-9"
	if err := NewOrdersPublisher(conn).PublishOrderPlacedBatch(ctx, []OrderPlaced{{OrderID: "A-1", CustomerID: &customer}, {OrderID: "A-2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := waitFor(ctx, conn, "test.shipments", 1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := waitFor(ctx, conn, "shipping.orders.dlq", 1, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	d, err := conn.Pull(ctx, "test.shipments")
	if err != nil || d == nil {
		t.Fatalf("Pull(test.shipments) = %v, %v", d, err)
	}
	s, err := shipping.DecodeShipmentScheduled(ctx, conn, d)
	if err != nil {
		t.Fatal(err)
	}
	if s.OrderID != "A-1" || s.CustomerID != "C-9" || d.Type != "shipping.shipment.scheduled.v1" {
		t.Errorf("shipping published %+v (type %q), want A-1 for C-9 (shipping.shipment.scheduled.v1)", s, d.Type)
	}

	dl, err := conn.Pull(ctx, "shipping.orders.dlq")
	if err != nil || dl == nil {
		t.Fatalf("Pull(shipping.orders.dlq) = %v, %v", dl, err)
	}
	o, err := shipping.DecodeOrderPlaced(ctx, conn, dl)
	if err != nil {
		t.Fatal(err)
	}
	if reason, _ := dl.Headers["x-acemq-error"].(string); o.OrderID != "A-2" || reason != "rejected by the handler: no customer id: nowhere to ship it" {
		t.Errorf("shipping's dead letter is %q with x-acemq-error %q, want A-2, rejected by the handler: no customer id: nowhere to ship it", o.OrderID, reason)
	}
	for queue, want := range map[string]int{"orders.new": 2, "shipping.orders.dlq": 0, "test.shipments": 0, "shipping.orders": 0} {
		if n, err := conn.MessageCount(ctx, queue); err != nil || n != want {
			t.Errorf("%s holds %d (%v), want %d", queue, n, err, want)
		}
	}
}
