package runtime_test

// Helpers shared by the broker tests: a runtime connection, raw amqp091
// access for what the tests observe on the wire, and a recorder for what
// handlers were given. Everything runs against the real broker
// (internal/brokertest); nothing here is a mock.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// textType is the plain-text message type most broker tests use.
var textType = runtime.NewTextType("acemq.test.text")

// wait is how long a test waits for something that should happen within a
// second or two; generous because the machine is shared.
const wait = 15 * time.Second

// ctxFor is a context bounded by d and cancelled at the end of the test.
func ctxFor(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// dial connects the runtime to the test broker and closes it at cleanup.
func dial(tb testing.TB, opts ...runtime.DialOption) *runtime.Connection {
	tb.Helper()
	u := brokertest.Require(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, u, opts...)
	if err != nil {
		tb.Fatalf("runtime.Dial: %v", err)
	}
	closeIt := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	}
	brokertest.CloseBeforeCleanup(tb, closeIt)
	tb.Cleanup(closeIt)
	return c
}

// shared is one plain amqp091 connection for everything the tests do
// through amqp091, so that a parallel suite does not churn connections;
// each use opens its own channel (a 404 closes a channel, not this).
var shared struct {
	sync.Mutex
	conn *amqp.Connection
}

// rawChannel opens a channel on the shared connection, closed at cleanup.
func rawChannel(tb testing.TB) *amqp.Channel {
	tb.Helper()
	ch := openChannel(tb)
	tb.Cleanup(func() { _ = ch.Close() })
	return ch
}

func openChannel(tb testing.TB) *amqp.Channel {
	tb.Helper()
	u := brokertest.Require(tb)
	shared.Lock()
	defer shared.Unlock()
	for range 2 {
		if shared.conn == nil || shared.conn.IsClosed() {
			c, err := amqp.Dial(u)
			if err != nil {
				tb.Fatalf("dial: %v", err)
			}
			shared.conn = c
		}
		ch, err := shared.conn.Channel()
		if err == nil {
			return ch
		}
		shared.conn = nil // closed under us: dial again once
	}
	tb.Fatalf("no channel on the shared amqp091 connection")
	return nil
}

// rawQueue declares q as a plain durable queue through amqp091, so that the
// runtime under test declares nothing the test relies on.
func rawQueue(tb testing.TB, q string, args amqp.Table) {
	tb.Helper()
	ch := rawChannel(tb)
	if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
		tb.Fatalf("declare %s: %v", q, err)
	}
}

// rawExchange declares a non-durable exchange and deletes it at cleanup.
func rawExchange(tb testing.TB, kind string) string {
	tb.Helper()
	ex := brokertest.Name("ex")
	ch := rawChannel(tb)
	if err := ch.ExchangeDeclare(ex, kind, false, false, false, false, nil); err != nil {
		tb.Fatalf("declare exchange %s: %v", ex, err)
	}
	tb.Cleanup(func() { deleteExchange(ex) })
	return ex
}

func deleteExchange(name string) {
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		_ = ch.ExchangeDelete(name, false, false)
	}
}

// rawPublish publishes p to the default exchange with routing key q through
// amqp091, with a confirm: the tests use it to forge what the runtime
// would never write.
func rawPublish(tb testing.TB, q string, p amqp.Publishing) {
	tb.Helper()
	ch := rawChannel(tb)
	if err := ch.Confirm(false); err != nil {
		tb.Fatalf("confirm mode: %v", err)
	}
	dc, err := ch.PublishWithDeferredConfirm("", q, true, false, p)
	if err != nil {
		tb.Fatalf("raw publish to %s: %v", q, err)
	}
	if !dc.Wait() {
		tb.Fatalf("raw publish to %s: nacked", q)
	}
}

// getOne waits up to d for one message on queue and takes it (auto-ack).
func getOne(tb testing.TB, queue string, d time.Duration) amqp.Delivery {
	tb.Helper()
	ch := rawChannel(tb)
	deadline := time.Now().Add(d)
	for {
		m, ok, err := ch.Get(queue, true)
		if err != nil {
			tb.Fatalf("get from %s: %v", queue, err)
		}
		if ok {
			return m
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no message on %s within %s", queue, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drain takes n messages from queue within d (auto-ack) and fails if fewer
// arrive.
func drain(tb testing.TB, queue string, n int, d time.Duration) []amqp.Delivery {
	tb.Helper()
	ch := rawChannel(tb)
	// The prefetch is a shortint: a count over 65535 (a fast broker fills
	// a queue with 100,000 in TestPublishAsyncConnectionLost) is refused.
	if err := ch.Qos(min(n, 1000), 0, false); err != nil {
		tb.Fatalf("qos: %v", err)
	}
	msgs, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		tb.Fatalf("consume %s: %v", queue, err)
	}
	out := make([]amqp.Delivery, 0, n)
	timeout := time.After(d)
	for len(out) < n {
		select {
		case m := <-msgs:
			out = append(out, m)
		case <-timeout:
			tb.Fatalf("%d of %d messages on %s within %s", len(out), n, queue, d)
		}
	}
	return out
}

// depth is the number of ready messages in queue, read through amqp091.
// A queue that does not exist is -1.
func depth(tb testing.TB, queue string) int {
	tb.Helper()
	ch := openChannel(tb)
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return -1
	}
	return q.Messages
}

// waitDepth waits up to d for queue to hold exactly n ready messages.
func waitDepth(tb testing.TB, queue string, n int, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(d)
	got := depth(tb, queue)
	for got != n {
		if time.Now().After(deadline) {
			tb.Fatalf("%s holds %d messages, want %d (waited %s)", queue, got, n, d)
		}
		time.Sleep(50 * time.Millisecond)
		got = depth(tb, queue)
	}
}

// queuesUnder lists q and every queue named q.<something>, sorted.
func queuesUnder(tb testing.TB, q string) []string {
	tb.Helper()
	names, err := brokertest.QueueNames()
	if err != nil {
		tb.Fatalf("list queues: %v", err)
	}
	var out []string
	for _, n := range names {
		if n == q || strings.HasPrefix(n, q+".") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// exchangeInfo reads an exchange back through the management API.
func exchangeInfo(tb testing.TB, name string) (kind string, durable bool) {
	tb.Helper()
	var x struct {
		Type    string `json:"type"`
		Durable bool   `json:"durable"`
	}
	if err := brokertest.Management("exchanges/{vhost}/"+url.PathEscape(name), &x); err != nil {
		tb.Fatalf("exchange %s: %v", name, err)
	}
	return x.Type, x.Durable
}

// hasBinding reports whether bindings (from brokertest.Bindings) hold one
// from source with routingKey.
func hasBinding(bindings []map[string]any, source, routingKey string) bool {
	for _, b := range bindings {
		if b["source"] == source && b["routing_key"] == routingKey {
			return true
		}
	}
	return false
}

// num turns a header or argument value (int32, int64, float64 from JSON…)
// into an int64, reporting whether it was a number at all.
func num(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case float64:
		return int64(x), x == float64(int64(x))
	}
	return 0, false
}

// seen is one handler call as a test records it.
type seen struct {
	At          time.Time
	Body        string
	Envelope    runtime.Envelope
	Headers     map[string]any
	RoutingKey  string
	Redelivered bool
}

// recorder collects handler calls and lets a test wait for them.
type recorder struct {
	mu    sync.Mutex
	calls []seen
	added chan struct{}
}

func newRecorder() *recorder { return &recorder{added: make(chan struct{}, 1)} }

func (r *recorder) add(body string, m *runtime.Message[string]) seen {
	s := seen{At: time.Now(), Body: body, Envelope: m.Envelope, Headers: m.Headers,
		RoutingKey: m.RoutingKey, Redelivered: m.Redelivered}
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
	select {
	case r.added <- struct{}{}:
	default:
	}
	return s
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// waitFor waits up to d until cond holds over the calls so far.
func (r *recorder) waitFor(tb testing.TB, d time.Duration, what string, cond func([]seen) bool) []seen {
	tb.Helper()
	timeout := time.After(d)
	for {
		calls := r.all()
		if cond(calls) {
			return calls
		}
		select {
		case <-r.added:
		case <-time.After(20 * time.Millisecond):
		case <-timeout:
			tb.Fatalf("waited %s for %s; handler calls: %s", d, what, describe(r.all()))
		}
	}
}

// waitN waits for at least n calls.
func (r *recorder) waitN(tb testing.TB, n int, d time.Duration) []seen {
	tb.Helper()
	return r.waitFor(tb, d, fmt.Sprintf("%d handler calls", n), func(c []seen) bool { return len(c) >= n })
}

func describe(calls []seen) string {
	if len(calls) > 20 {
		return fmt.Sprintf("%d calls, the first: %s", len(calls), describe(calls[:20]))
	}
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "[%q attempt %d id %s error %q] ", c.Body, c.Envelope.Attempt, c.Envelope.ID, c.Envelope.Error)
	}
	return b.String()
}

// consume starts a text consumer on q whose handler records each call and
// answers with decide; it is closed at cleanup.
func consume(tb testing.TB, c *runtime.Connection, q string, retry *runtime.RetryPolicy,
	decide func(seen) runtime.Ack, opts ...runtime.ConsumeOption) (*runtime.Consumer, *recorder) {
	tb.Helper()
	rec := newRecorder()
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		return decide(rec.add(m.Payload, m))
	}
	spec := runtime.ConsumerSpec{Queue: q, Retry: retry, Routes: []runtime.Route{runtime.Handle(textType, h)}}
	cs, err := runtime.Consume(ctxFor(tb, 10*time.Second), c, spec, opts...)
	if err != nil {
		tb.Fatalf("Consume %s: %v", q, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cs.Close(ctx)
	})
	return cs, rec
}

// publishText publishes body to q through the runtime (default exchange).
func publishText(tb testing.TB, c *runtime.Connection, q, body string, opts ...runtime.PublishOption) {
	tb.Helper()
	opts = append([]runtime.PublishOption{runtime.WithRoutingKey(q)}, opts...)
	if err := runtime.Publish(ctxFor(tb, 10*time.Second), c, textType, "", body, opts...); err != nil {
		tb.Fatalf("Publish to %s: %v", q, err)
	}
}

// textMessage is a raw text/plain publishing of type textType.
func textMessage(body string, headers amqp.Table) amqp.Publishing {
	return amqp.Publishing{
		ContentType:  wire.ContentTypeText,
		Type:         textType.Name(),
		DeliveryMode: amqp.Persistent,
		Headers:      headers,
		Body:         []byte(body),
	}
}

func ptr[T any](v T) *T { return &v }

// accept is a decide function that accepts everything.
func accept(seen) runtime.Ack { return runtime.Accept() }

// headerString reads a string header of a raw delivery.
func headerString(tb testing.TB, d amqp.Delivery, k string) string {
	tb.Helper()
	v, ok := d.Headers[k]
	if !ok {
		tb.Fatalf("header %s missing; headers: %v", k, d.Headers)
	}
	s, ok := v.(string)
	if !ok {
		tb.Fatalf("header %s is %T %v, want a string", k, v, v)
	}
	return s
}
