package acemqtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// A handler test without a broker: build the message the handler would
// receive (here on its third delivery), call the handler as a consumer
// does, and look at the Ack.
func ExampleNewMessage() {
	handler := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		if m.Envelope.Attempt >= 3 {
			return runtime.Park(fmt.Errorf("still failing after %d attempts: %s", m.Envelope.Attempt, m.Envelope.Error))
		}
		return runtime.Retry(errors.New("warehouse timeout"))
	}
	m := acemqtest.NewMessage("A-1", acemqtest.WithAttempt(3), acemqtest.WithLastError("warehouse timeout"))
	ack := acemqtest.Call(context.Background(), handler, m)
	fmt.Println(ack.Kind())
	fmt.Println(acemqtest.Reason(ack))
	// Output:
	// park
	// parked by the handler: still failing after 3 attempts: warehouse timeout
}

// In a test: the Assert helpers fail it with what the handler decided.
func ExampleAssertReject() {
	var t *testing.T // in a real test: the test function's argument
	orders := runtime.NewJSONType[map[string]any]("order.placed.v1", `{"type": "object", "required": ["order_id"]}`)
	handler := func(ctx context.Context, m *runtime.Message[map[string]any]) runtime.Ack {
		if m.Payload["customer_id"] == nil {
			return runtime.Reject(errors.New("no customer id"))
		}
		return runtime.Accept()
	}
	// Delivered checks the payload against the type's schema first.
	m := acemqtest.Delivered(t, orders, map[string]any{"order_id": "A-2"})
	acemqtest.AssertReject(t, acemqtest.Call(context.Background(), handler, m), "no customer id")
}

// A test against the real broker at ACEMQ_TEST_URL: its own connection
// and queue names, deleted at the end; skipped without a broker, failed
// under CI=true.
func ExampleQueue() {
	var t *testing.T // in a real test: the test function's argument
	c := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "payments")
	ctx := context.Background()
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Publish(ctx, c, runtime.NewTextType("payment.v1"), "", "P-1", runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
}

// Reading a queue back through the management API: what the broker made
// of a declaration (durable, its type, its arguments).
func ExampleManagement() {
	var t *testing.T // in a real test: the test function's argument
	c := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "orders")
	if err := c.Declare(context.Background(), runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	var info struct {
		Durable   bool           `json:"durable"`
		Type      string         `json:"type"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := acemqtest.Management(http.MethodGet, "queues/{vhost}/"+url.PathEscape(q), nil, &info); err != nil {
		t.Fatal(err)
	}
	if !info.Durable || info.Type != "classic" {
		t.Errorf("queue %s: durable %v, type %q; want a durable classic queue", q, info.Durable, info.Type)
	}
}
