package runtime_test

// Publish, against the broker: the envelope on the wire as a raw amqp091
// reader sees it, batches, concurrency, unroutable and missing exchanges.
// The password that must never show is in dial_broker_test.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

var firstSeenFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestPublishEnvelopeOnTheWire(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "wire")
	rawQueue(t, q, nil)
	c := dial(t, runtime.WithOrigin("warehouse@laptop"))
	before := time.Now().Add(-time.Second)
	publishText(t, c, q, "hello", runtime.WithHeaders(map[string]any{"tenant": "t1"}), runtime.WithCorrelationID("corr-1"))
	publishText(t, c, q, "hello")
	ds := drain(t, q, 2, wait)

	ids := map[string]bool{}
	for i, d := range ds {
		id := headerString(t, d, wire.HeaderID)
		if id == "" || id != d.MessageId {
			t.Errorf("message %d: x-acemq-id %q, message_id %q; want equal and set", i, id, d.MessageId)
		}
		ids[id] = true
		if a, ok := d.Headers[wire.HeaderAttempt].(int64); !ok || a != 1 {
			t.Errorf("message %d: x-acemq-attempt = %#v, want int64(1)", i, d.Headers[wire.HeaderAttempt])
		}
		fs := headerString(t, d, wire.HeaderFirstSeen)
		if !firstSeenFormat.MatchString(fs) {
			t.Errorf("message %d: x-acemq-first-seen %q is not RFC 3339 UTC with milliseconds", i, fs)
		} else if ts, _ := time.Parse(time.RFC3339Nano, fs); ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
			t.Errorf("message %d: x-acemq-first-seen %s is not about now", i, fs)
		}
		if o := headerString(t, d, wire.HeaderOrigin); o != "warehouse@laptop" {
			t.Errorf("message %d: x-acemq-origin %q, want warehouse@laptop", i, o)
		}
		if d.Type != textType.Name() || d.ContentType != wire.ContentTypeText {
			t.Errorf("message %d: type %q content_type %q, want %q and text/plain", i, d.Type, d.ContentType, textType.Name())
		}
		if d.DeliveryMode != amqp.Persistent {
			t.Errorf("message %d: delivery mode %d, want persistent", i, d.DeliveryMode)
		}
		if d.Timestamp.IsZero() || d.Timestamp.Before(before.Truncate(time.Second)) || d.Timestamp.After(time.Now().Add(time.Second)) {
			t.Errorf("message %d: timestamp %v, want about now", i, d.Timestamp)
		}
		if string(d.Body) != "hello" {
			t.Errorf("message %d: body %q", i, d.Body)
		}
		if _, ok := d.Headers[wire.HeaderError]; ok {
			t.Errorf("message %d: a fresh message carries x-acemq-error", i)
		}
	}
	if len(ids) != 2 {
		t.Errorf("two publishes share an x-acemq-id: %v", ids)
	}
	if ds[0].CorrelationId != "corr-1" || ds[0].Headers["tenant"] != "t1" {
		t.Errorf("first message: correlation_id %q, tenant %v; want corr-1, t1", ds[0].CorrelationId, ds[0].Headers["tenant"])
	}
}

func TestPublishDefaultOrigin(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "origin")
	rawQueue(t, q, nil)
	c := dial(t)
	publishText(t, c, q, "who am I")
	d := getOne(t, q, wait)
	host, _ := os.Hostname()
	o := headerString(t, d, wire.HeaderOrigin)
	program, h, ok := strings.Cut(o, "@")
	if !ok || program == "" || h != host {
		t.Errorf("default x-acemq-origin %q, want <program>@%s", o, host)
	}
}

func TestPublishJSONValidates(t *testing.T) {
	t.Parallel()
	type order struct {
		OrderID string `json:"order_id"`
		Total   int    `json:"total"`
	}
	mt := runtime.NewJSONType[order]("acemq.test.order.v1", `{"type":"object",
		"properties":{"order_id":{"type":"string","minLength":1},"total":{"type":"integer","minimum":1}},
		"required":["order_id","total"]}`)
	q := brokertest.Queue(t, "json")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	err := runtime.Publish(ctx, c, mt, "", order{OrderID: "A-1", Total: 0}, runtime.WithRoutingKey(q))
	if !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Errorf("Publish of an order with total 0 = %v, want an error matching ErrInvalidMessage", err)
	}
	if err := runtime.Publish(ctx, c, mt, "", order{OrderID: "A-2", Total: 5}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("Publish of a valid order: %v", err)
	}
	d := getOne(t, q, wait)
	if d.ContentType != wire.ContentTypeJSON || d.Type != "acemq.test.order.v1" {
		t.Errorf("content_type %q type %q", d.ContentType, d.Type)
	}
	if !strings.Contains(string(d.Body), `"A-2"`) {
		t.Errorf("body %s, want the valid order", d.Body)
	}
	// A batch with one invalid order sends nothing.
	err = runtime.PublishBatch(ctx, c, mt, "", []order{{OrderID: "A-3", Total: 1}, {OrderID: "", Total: 1}}, runtime.WithRoutingKey(q))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), "message 2 of 2 (index 1)") {
		t.Errorf("PublishBatch with an invalid order = %v, want ErrInvalidMessage naming index 1", err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := depth(t, q); n != 0 {
		t.Errorf("an invalid order or its batch was sent: %s holds %d more", q, n)
	}
}

func TestPublishCancelledContext(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "cancelled")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := runtime.Publish(ctx, c, textType, "", "never", runtime.WithRoutingKey(q)); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a cancelled context = %v, want an error matching context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Publish with a cancelled context took %s", took)
	}
	if err := runtime.PublishBatch(ctxFor(t, 5*time.Second), c, textType, "", nil, runtime.WithRoutingKey(q)); err != nil {
		t.Errorf("PublishBatch of nothing = %v, want nil", err)
	}
}

func TestPublishBadHeaderValue(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "badheader")
	rawQueue(t, q, nil)
	c := dial(t)
	err := runtime.Publish(ctxFor(t, 5*time.Second), c, textType, "", "x",
		runtime.WithRoutingKey(q), runtime.WithHeaders(map[string]any{"bad": struct{ A int }{1}}))
	if err == nil {
		t.Errorf("Publish with a header AMQP cannot carry = nil, want an error")
	}
	// Nothing was sent, and the connection carries on.
	publishText(t, c, q, "good")
	if got := string(getOne(t, q, wait).Body); got != "good" {
		t.Errorf("body %q, want good (the bad publish must not arrive)", got)
	}
}

func TestPublishAfterClose(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "closed")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := runtime.Publish(ctx, c, textType, "", "late", runtime.WithRoutingKey(q)); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("Publish on a closed connection = %v, want ErrClosed", err)
	}
	if _, err := c.MessageCount(ctx, q); !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("MessageCount on a closed connection = %v, want ErrClosed", err)
	}
}

func TestPublishAll(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "publishall")
	rawQueue(t, q, nil)
	c := dial(t)
	const n = 500
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf("msg-%03d", i)
	}
	if err := runtime.PublishBatch(ctxFor(t, 20*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	// PublishBatch returned: every message was confirmed, so all are there.
	if got := depth(t, q); got != n {
		t.Errorf("after PublishBatch %s holds %d, want %d", q, got, n)
	}
	checkAll(t, drain(t, q, n, wait), bodies)
}

func TestConcurrentPublish(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "concurrent")
	rawQueue(t, q, nil)
	c := dial(t)
	const goroutines, each = 25, 20
	var bodies []string
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	ctx := ctxFor(t, 30*time.Second)
	for g := range goroutines {
		for i := range each {
			bodies = append(bodies, fmt.Sprintf("g%02d-%02d", g, i))
		}
		wg.Go(func() {
			for i := range each {
				errs <- runtime.Publish(ctx, c, textType, "", fmt.Sprintf("g%02d-%02d", g, i), runtime.WithRoutingKey(q))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Publish: %v", err)
		}
	}
	if got := depth(t, q); got != goroutines*each {
		t.Errorf("after %d confirmed publishes %s holds %d", goroutines*each, q, got)
	}
	checkAll(t, drain(t, q, goroutines*each, wait), bodies)
}

// checkAll checks that ds carry exactly bodies, each once, with distinct ids.
func checkAll(t *testing.T, ds []amqp.Delivery, bodies []string) {
	t.Helper()
	got := map[string]int{}
	ids := map[string]bool{}
	for _, d := range ds {
		got[string(d.Body)]++
		ids[d.MessageId] = true
	}
	for _, b := range bodies {
		if got[b] != 1 {
			t.Errorf("%q arrived %d times, want once", b, got[b])
		}
	}
	if len(ids) != len(bodies) {
		t.Errorf("%d distinct message ids for %d messages", len(ids), len(bodies))
	}
}

func TestPublishUnroutable(t *testing.T) {
	t.Parallel()
	ex := rawExchange(t, "direct") // no queue bound
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	err := runtime.Publish(ctx, c, textType, ex, "nobody listens", runtime.WithRoutingKey("nowhere"))
	if !errors.Is(err, runtime.ErrUnroutable) {
		t.Fatalf("mandatory publish to an exchange with no binding = %v, want ErrUnroutable", err)
	}
	var pe *runtime.PublishError
	if !errors.As(err, &pe) || pe.Exchange != ex || pe.RoutingKey != "nowhere" {
		t.Errorf("error %v: want a *PublishError naming exchange %s and key nowhere", err, ex)
	}
	if err := runtime.Publish(ctx, c, textType, ex, "fan-out", runtime.WithRoutingKey("nowhere"), runtime.WithoutMandatory()); err != nil {
		t.Errorf("WithoutMandatory publish = %v, want nil", err)
	}
	// Unroutable to the default exchange: a queue that does not exist.
	err = runtime.Publish(ctx, c, textType, "", "lost", runtime.WithRoutingKey(brokertest.Name("missing")))
	if !errors.Is(err, runtime.ErrUnroutable) {
		t.Errorf("publish to a missing queue = %v, want ErrUnroutable", err)
	}
}

func TestPublishToMissingExchange(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "noexchange")
	rawQueue(t, q, nil)
	c := dial(t)
	start := time.Now()
	missing := brokertest.Name("no-such-exchange")
	err := runtime.Publish(ctxFor(t, 20*time.Second), c, textType, missing, "x")
	if err == nil {
		t.Fatalf("publish to an exchange that does not exist = nil, want an error")
	}
	if !errors.Is(err, runtime.ErrExchangeNotFound) || !strings.Contains(err.Error(), missing) ||
		!strings.Contains(err.Error(), "declare the topology first") {
		t.Errorf("publish to a missing exchange: %v; want ErrExchangeNotFound naming %s and saying to declare the topology", err, missing)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the error took %s, want a few seconds at most (not a hang)", took)
	}
	// The broker closed the channel; the connection carries on.
	publishText(t, c, q, "after the 404")
	if got := string(getOne(t, q, wait).Body); got != "after the 404" {
		t.Errorf("body %q", got)
	}
}
