package orders_test

import (
	"context"
	"github.com/acemq/acemq-go/runtime/wire"
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/golden/orders/want"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

// handler is the service's side of the generated OrdersNewHandler.
type handler struct {
	placed    chan *runtime.Message[orders.OrderPlaced]
	cancelled chan *runtime.Message[orders.OrderCancelled]
}

func (h *handler) HandleOrderPlaced(_ context.Context, m *runtime.Message[orders.OrderPlaced]) runtime.Ack {
	h.placed <- m
	return runtime.Accept()
}

func (h *handler) HandleOrderCancelled(_ context.Context, m *runtime.Message[orders.OrderCancelled]) runtime.Ack {
	h.cancelled <- m
	return runtime.Accept()
}

// Two types on one queue: an Avro one and a JSON Schema one, each published
// through the typed publisher and received by its own method.
func TestPublishAndConsumeBothTypes(t *testing.T) {
	ctx, conn := goldentest.Connect(t, orders.Topology())
	h := &handler{
		placed:    make(chan *runtime.Message[orders.OrderPlaced], 1),
		cancelled: make(chan *runtime.Message[orders.OrderCancelled], 1),
	}
	consumer, err := orders.ConsumeOrdersNew(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeOrdersNew: %v", err)
	}
	defer consumer.Close(context.Background())
	pub := orders.NewOrdersPublisher(conn)

	customer := "C-9"
	placed := orders.OrderPlaced{
		OrderID: "A-1", CustomerID: &customer, AmountCents: 1250, Currency: "EUR",
		Lines: []orders.OrderPlacedOrderLine{{Sku: "SKU-1", Quantity: 2}, {Sku: "SKU-2", Quantity: 1}},
	}
	if err := pub.PublishOrderPlaced(ctx, placed); err != nil {
		t.Fatalf("PublishOrderPlaced: %v", err)
	}
	got := goldentest.Receive(t, h.placed, "OrderPlaced")
	if !reflect.DeepEqual(got.Payload, placed) {
		t.Errorf("payload %+v, want %+v", got.Payload, placed)
	}
	goldentest.CheckEnvelope(t, got.Envelope, "order.placed.v2")
	if got.RoutingKey != "order.created" || got.Envelope.ContentType != wire.ContentTypeAvro {
		t.Errorf("routing key %q content type %q, want order.created and Avro", got.RoutingKey, got.Envelope.ContentType)
	}

	note := "changed my mind"
	cancelled := orders.OrderCancelled{OrderID: "A-1", Reason: orders.OrderCancelledReasonCustomer, Note: &note}
	if err := pub.PublishOrderCancelled(ctx, cancelled); err != nil {
		t.Fatalf("PublishOrderCancelled: %v", err)
	}
	gotC := goldentest.Receive(t, h.cancelled, "OrderCancelled")
	if !reflect.DeepEqual(gotC.Payload, cancelled) {
		t.Errorf("payload %+v, want %+v", gotC.Payload, cancelled)
	}
	goldentest.CheckEnvelope(t, gotC.Envelope, "order.cancelled.v1")
	if gotC.RoutingKey != "order.cancelled" || gotC.Envelope.ContentType != wire.ContentTypeJSON {
		t.Errorf("routing key %q content type %q, want order.cancelled and JSON", gotC.RoutingKey, gotC.Envelope.ContentType)
	}
}

// The generated Topology carries the manifest's queue options to the broker.
func TestTopologyOnTheBroker(t *testing.T) {
	goldentest.Connect(t, orders.Topology())
	q := brokertest.QueueDetails(t, "golden.orders.new")
	if q.Type != "quorum" || q.Arguments["x-dead-letter-exchange"] != "acemq.dlx" || q.Arguments["x-max-length"] != float64(10000) ||
		q.Arguments["x-delivery-limit"] != float64(30) {
		t.Errorf("golden.orders.new: type %q arguments %v, want quorum, acemq.dlx, x-max-length 10000, x-delivery-limit 30 (delivery_limit)", q.Type, q.Arguments)
	}
	// exponential(6, 10s, 300s): waits 10s 20s 40s 80s 160s; rungs from 30s.
	for _, rung := range []string{"golden.orders.new.retry.40s", "golden.orders.new.retry.80s", "golden.orders.new.retry.160s"} {
		r := brokertest.QueueDetails(t, rung)
		if r.Type != "quorum" || r.Arguments["x-dead-letter-strategy"] != "at-least-once" || r.Arguments["x-overflow"] != "reject-publish" {
			t.Errorf("%s: type %q arguments %v, want a quorum rung with at-least-once dead-lettering and reject-publish", rung, r.Type, r.Arguments)
		}
	}
	if n := len(brokertest.Bindings(t, "golden.orders.new")); n != 3 { // the default exchange's and two
		t.Errorf("golden.orders.new has %d bindings, want 3", n)
	}
}

// Without a broker: each message type's codec round-trips a value.
func TestCodecRoundTrip(t *testing.T) {
	customer := "C-9"
	note := "changed my mind"
	goldentest.RoundTrip(t, orders.TypeOfOrderPlaced(), orders.OrderPlaced{
		OrderID: "A-1", CustomerID: &customer, AmountCents: 1250, Currency: "EUR",
		Lines: []orders.OrderPlacedOrderLine{{Sku: "SKU-1", Quantity: 2}}})
	goldentest.RoundTrip(t, orders.TypeOfOrderCancelled(), orders.OrderCancelled{OrderID: "A-1", Reason: orders.OrderCancelledReasonStock, Note: &note})
}
