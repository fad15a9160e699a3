package acemqtest_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// recorder is an acemqtest.TB that records failures instead of failing,
// so the tests can check that an assertion fails when it should.
type recorder struct {
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	goruntime.Goexit()
}

// run calls f with a recorder, in a goroutine so a Fatalf can stop it.
func run(f func(tb acemqtest.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

type order struct {
	ID         string  `json:"order_id"`
	CustomerID *string `json:"customer_id,omitempty"`
	Total      int     `json:"total"`
}

var orderPlaced = runtime.NewJSONType[order]("order.placed.v1", `{
	"type": "object",
	"required": ["order_id", "total"],
	"properties": {"order_id": {"type": "string", "minLength": 1}, "total": {"type": "integer", "minimum": 1}}
}`)

func handle(_ context.Context, m *runtime.Message[order]) runtime.Ack {
	switch {
	case m.Payload.CustomerID == nil:
		return runtime.Reject(errors.New("no customer id"))
	case m.Payload.Total > 1000:
		return runtime.Retry(runtime.Fatal(errors.New("over the limit")))
	case m.Envelope.Attempt < 2:
		return runtime.Retry(errors.New("warehouse timeout"))
	case m.Payload.ID == "boom":
		var counts map[string]int
		counts["x"]++
	}
	return runtime.Accept()
}

func TestNewMessage(t *testing.T) {
	before := time.Now().Add(-time.Second)
	m := acemqtest.NewMessage(order{ID: "A-1"})
	if m.Payload.ID != "A-1" || m.Envelope.Attempt != 1 || len(m.Envelope.ID) != 36 || m.Envelope.FirstSeen.Before(before) || m.Headers == nil {
		t.Errorf("NewMessage defaults = %+v", m)
	}
	m = acemqtest.NewMessage(order{ID: "A-1"}, acemqtest.WithAttempt(3), acemqtest.WithLastError("warehouse timeout"),
		acemqtest.WithHeader("tenant", "t-1"), acemqtest.WithRoutingKey("order.created"), acemqtest.WithRedelivered(),
		acemqtest.WithEnvelope(func(e *runtime.Envelope) { e.CorrelationID = "c-1" }))
	if m.Envelope.Attempt != 3 || m.Envelope.Error != "warehouse timeout" || m.Headers["tenant"] != "t-1" ||
		m.RoutingKey != "order.created" || !m.Redelivered || m.Envelope.CorrelationID != "c-1" {
		t.Errorf("NewMessage with options = %+v", m)
	}
}

func TestDelivered(t *testing.T) {
	customer := "C-9"
	m := acemqtest.Delivered(t, orderPlaced, order{ID: "A-1", CustomerID: &customer, Total: 5})
	if m.Envelope.Type != "order.placed.v1" || m.Envelope.ContentType != wire.ContentTypeJSON || *m.Payload.CustomerID != "C-9" {
		t.Errorf("Delivered = %+v", m)
	}
	// A payload that breaks the schema fails the test, naming the field.
	r := run(func(tb acemqtest.TB) { acemqtest.Delivered(tb, orderPlaced, order{ID: "A-2", Total: 0}) })
	if !r.fatal || len(r.errors) != 1 || !strings.Contains(r.errors[0], "a publish of this order.placed.v1 would fail") || !strings.Contains(r.errors[0], "/total") {
		t.Errorf("Delivered with total 0: %+v; want a fatal failure naming /total", r)
	}
}

type shipment struct {
	ID    string `avro:"id"`
	Items int    `avro:"items"`
}

var shipped = runtime.NewAvroType[shipment]("shipment.sent.v1", "shipments",
	`{"type":"record","name":"Shipment","fields":[{"name":"id","type":"string"},{"name":"items","type":"int"}]}`)

// Delivered goes through the Avro codec too: the Confluent wire format and
// back, with nothing configured.
func TestDeliveredAvro(t *testing.T) {
	m := acemqtest.Delivered(t, shipped, shipment{ID: "S-1", Items: 3})
	if m.Payload != (shipment{ID: "S-1", Items: 3}) || m.Envelope.ContentType != wire.ContentTypeAvro || m.Envelope.Type != "shipment.sent.v1" {
		t.Errorf("Delivered = %+v", m)
	}
}

func TestAssertions(t *testing.T) {
	ctx := context.Background()
	customer := "C-9"
	first := acemqtest.NewMessage(order{ID: "A-1", CustomerID: &customer, Total: 5})
	second := acemqtest.NewMessage(order{ID: "A-1", CustomerID: &customer, Total: 5}, acemqtest.WithAttempt(2))
	noCustomer := acemqtest.NewMessage(order{ID: "A-2", Total: 5})
	tooBig := acemqtest.NewMessage(order{ID: "A-3", CustomerID: &customer, Total: 5000})

	acemqtest.AssertRetry(t, acemqtest.Call(ctx, handle, first), "warehouse timeout")
	acemqtest.AssertAccept(t, acemqtest.Call(ctx, handle, second))
	acemqtest.AssertReject(t, acemqtest.Call(ctx, handle, noCustomer), "no customer id")
	acemqtest.AssertReject(t, acemqtest.Call(ctx, handle, tooBig), "over the limit") // Fatal inside Retry
	if got := acemqtest.Reason(acemqtest.Call(ctx, handle, noCustomer)); got != "rejected by the handler: no customer id" {
		t.Errorf("Reason = %q", got)
	}
	acemqtest.AssertPark(t, runtime.Park(errors.New("bad")), "bad")

	// Each assertion fails on another outcome, saying what it got.
	cases := []struct {
		name string
		f    func(acemqtest.TB)
		want string
	}{
		{"accept", func(tb acemqtest.TB) { acemqtest.AssertAccept(tb, acemqtest.Call(ctx, handle, first)) }, "ack = retry: warehouse timeout, want accept"},
		{"retry", func(tb acemqtest.TB) { acemqtest.AssertRetry(tb, acemqtest.Call(ctx, handle, tooBig), "") }, "ack = reject: over the limit, want retry"},
		{"reason", func(tb acemqtest.TB) { acemqtest.AssertRetry(tb, acemqtest.Call(ctx, handle, first), "disk full") }, `want a reason containing "disk full"`},
		{"park", func(tb acemqtest.TB) { acemqtest.AssertPark(tb, runtime.Accept(), "") }, "ack = accept, want park"},
	}
	for _, tc := range cases {
		r := run(tc.f)
		if len(r.errors) != 1 || !strings.Contains(r.errors[0], tc.want) {
			t.Errorf("%s: failures %q, want one containing %q", tc.name, r.errors, tc.want)
		}
	}
}

// A panic is a Retry with the value and the handler's line, as in a
// consumer.
func TestCallPanic(t *testing.T) {
	customer := "C-9"
	m := acemqtest.NewMessage(order{ID: "boom", CustomerID: &customer, Total: 5}, acemqtest.WithAttempt(2))
	a := acemqtest.Call(context.Background(), handle, m)
	acemqtest.AssertRetry(t, a, "handler panicked: assignment to entry in nil map")
	var pe *runtime.PanicError
	if !errors.As(a.Err(), &pe) || !strings.Contains(pe.Frame, "acemqtest/acemqtest_test.go:") || !strings.Contains(string(pe.Stack), "goroutine") {
		t.Errorf("panic error = %+v; want the frame in acemqtest_test.go and the stack", pe)
	}
}
