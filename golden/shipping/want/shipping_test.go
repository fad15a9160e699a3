package shipping_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/golden/shipping/want"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

// handler fails each order's first attempt, so the manifest's fixed policy
// (3 attempts, 200ms apart) is seen at work.
type handler struct {
	got chan *runtime.Message[shipping.ShipmentRequested]
}

func (h *handler) HandleShipmentRequested(_ context.Context, m *runtime.Message[shipping.ShipmentRequested]) runtime.Ack {
	h.got <- m
	if m.Envelope.Attempt == 1 {
		return runtime.Retry(errors.New("the carrier is not answering"))
	}
	return runtime.Accept()
}

func TestPublishThroughTheDefaultExchangeWithRetry(t *testing.T) {
	ctx, conn := goldentest.Connect(t, shipping.Topology())
	h := &handler{got: make(chan *runtime.Message[shipping.ShipmentRequested], 4)}
	consumer, err := shipping.ConsumeRequests(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeRequests: %v", err)
	}
	defer consumer.Close(context.Background())

	express := true
	want := shipping.ShipmentRequested{
		OrderID:     "A-1",
		Address:     shipping.ShipmentRequestedAddress{Street: "1 Quay St", City: "Lyon", Country: "FR"},
		RequestedAt: time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC),
		Express:     &express,
	}
	if err := shipping.NewShippingPublisher(conn).PublishShipmentRequested(ctx, want, runtime.WithCorrelationID("corr-1")); err != nil {
		t.Fatalf("PublishShipmentRequested: %v", err)
	}
	first := goldentest.Receive(t, h.got, "first attempt")
	if !reflect.DeepEqual(first.Payload, want) {
		t.Errorf("payload %+v, want %+v", first.Payload, want)
	}
	goldentest.CheckEnvelope(t, first.Envelope, "shipment.requested.v1")
	if first.Envelope.CorrelationID != "corr-1" || first.RoutingKey != "golden.shipping.requests" {
		t.Errorf("correlation %q routing key %q", first.Envelope.CorrelationID, first.RoutingKey)
	}
	second := goldentest.Receive(t, h.got, "second attempt (the manifest's policy retries)")
	if second.Envelope.Attempt != 2 || second.Envelope.ID != first.Envelope.ID || second.Envelope.Error != "the carrier is not answering" {
		t.Errorf("second delivery: attempt %d id %q error %q; want attempt 2, id %q, the first failure's reason",
			second.Envelope.Attempt, second.Envelope.ID, second.Envelope.Error, first.Envelope.ID)
	}
}

// No dead_letter in the manifest: the queue has no dead-letter arguments,
// and a policy that never uses the broker has no rungs.
func TestTopologyWithoutDeadLetterOrRungs(t *testing.T) {
	goldentest.Connect(t, shipping.Topology())
	q := brokertest.QueueDetails(t, "golden.shipping.requests")
	if _, ok := q.Arguments["x-dead-letter-exchange"]; ok || q.Type != "classic" {
		t.Errorf("golden.shipping.requests: type %q arguments %v, want classic with no dead-letter exchange", q.Type, q.Arguments)
	}
	names, err := brokertest.QueueNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "golden.shipping.requests.retry.") {
			t.Errorf("rung %s declared for a policy that never uses the broker", n)
		}
	}
}

// urgentHandler fails the first delivery; requeue_on_failure puts it back
// at the head of the queue instead of retrying it.
type urgentHandler struct {
	got chan *runtime.Message[shipping.ShipmentRequested]
}

func (h *urgentHandler) HandleShipmentRequested(_ context.Context, m *runtime.Message[shipping.ShipmentRequested]) runtime.Ack {
	h.got <- m
	if !m.Redelivered {
		return runtime.Retry(errors.New("busy"))
	}
	return runtime.Accept()
}

// requeue_on_failure reaches the consumer: the failed delivery comes back
// redelivered, as the next attempt (a requeue counts as one). A WithRoutingKey given to the publish
// method wins over the manifest's routing key.
func TestRequeueOnFailureAndRoutingKeyOverride(t *testing.T) {
	ctx, conn := goldentest.Connect(t, shipping.Topology())
	h := &urgentHandler{got: make(chan *runtime.Message[shipping.ShipmentRequested], 4)}
	consumer, err := shipping.ConsumeUrgent(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeUrgent: %v", err)
	}
	defer consumer.Close(context.Background())
	msg := shipping.ShipmentRequested{OrderID: "U-1", Address: shipping.ShipmentRequestedAddress{Street: "s", City: "c", Country: "NO"},
		RequestedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	if err := shipping.NewShippingPublisher(conn).PublishShipmentRequested(ctx, msg, runtime.WithRoutingKey("golden.shipping.urgent")); err != nil {
		t.Fatalf("publish: %v", err)
	}
	first := goldentest.Receive(t, h.got, "first delivery on the urgent queue")
	second := goldentest.Receive(t, h.got, "the requeued delivery")
	if first.RoutingKey != "golden.shipping.urgent" || first.Redelivered {
		t.Errorf("first delivery: routing key %q redelivered %v", first.RoutingKey, first.Redelivered)
	}
	if !second.Redelivered || second.Envelope.Attempt != 2 || second.Envelope.ID != first.Envelope.ID {
		t.Errorf("second delivery: redelivered %v attempt %d id %q; want a redelivery of %q on attempt 2",
			second.Redelivered, second.Envelope.Attempt, second.Envelope.ID, first.Envelope.ID)
	}
}

// A func is a handler through UrgentHandlerFunc, and a message pulled off
// a queue (as an operator's tool reads a dead letter) decodes typed with
// DecodeShipmentRequested; a delivery of another type is ErrOtherType.
func TestHandlerFuncAndDecodeOfAPulledMessage(t *testing.T) {
	ctx, conn := goldentest.Connect(t, shipping.Topology())
	var seen []string
	var h shipping.UrgentHandler = shipping.UrgentHandlerFunc(func(_ context.Context, m *runtime.Message[shipping.ShipmentRequested]) runtime.Ack {
		seen = append(seen, m.Payload.OrderID)
		return runtime.Park(errors.New("no carrier"))
	})
	if ack := h.HandleShipmentRequested(ctx, &runtime.Message[shipping.ShipmentRequested]{Payload: shipping.ShipmentRequested{OrderID: "F-1"}}); ack.Kind() != runtime.AckPark || len(seen) != 1 || seen[0] != "F-1" {
		t.Errorf("the adapter returned %v and saw %v; want the func's Park and [F-1]", ack, seen)
	}

	want := shipping.ShipmentRequested{OrderID: "P-1", Address: shipping.ShipmentRequestedAddress{Street: "s", City: "c", Country: "FR"},
		RequestedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	if err := shipping.NewShippingPublisher(conn).PublishShipmentRequested(ctx, want, runtime.WithRoutingKey("golden.shipping.urgent")); err != nil {
		t.Fatal(err)
	}
	var d *runtime.Delivery
	for deadline := time.Now().Add(10 * time.Second); d == nil && time.Now().Before(deadline); {
		var err error
		if d, err = conn.Pull(ctx, "golden.shipping.urgent"); err != nil {
			t.Fatal(err)
		}
	}
	if d == nil {
		t.Fatal("golden.shipping.urgent stayed empty")
	}
	defer d.Ack(ctx)
	got, err := shipping.DecodeShipmentRequested(ctx, conn, d)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeShipmentRequested = %+v, %v; want %+v", got, err, want)
	}
	other := *d
	other.Type = "order.placed.v2"
	if _, err := shipping.DecodeShipmentRequested(ctx, conn, &other); !errors.Is(err, runtime.ErrOtherType) || !strings.Contains(err.Error(), `"order.placed.v2"`) {
		t.Errorf("decoding a delivery of another type = %v; want ErrOtherType naming it", err)
	}
	bad := *d
	bad.Body = []byte(`{"order_id": 7}`)
	if _, err := shipping.DecodeShipmentRequested(ctx, conn, &bad); err == nil || !strings.Contains(err.Error(), "shipment.requested.v1") {
		t.Errorf("decoding a body the schema refuses = %v; want an error naming the message type", err)
	}
}

// Without a broker: the message type's codec round-trips a value.
func TestCodecRoundTrip(t *testing.T) {
	express := true
	goldentest.RoundTrip(t, shipping.TypeOfShipmentRequested(), shipping.ShipmentRequested{
		OrderID: "A-1", Address: shipping.ShipmentRequestedAddress{Street: "1 Quay St", City: "Lyon", Country: "FR"},
		RequestedAt: time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC), Express: &express})
}
