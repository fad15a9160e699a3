package pgstore_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
)

// event is the outbox tests' message: a key and its sequence number.
type event struct {
	Key string `json:"key"`
	Seq int    `json:"seq"`
}

var eventType = runtime.NewJSONType[event]("test.outbox.event.v1", `{
  "type": "object", "required": ["key", "seq"], "additionalProperties": false,
  "properties": {"key": {"type": "string", "minLength": 1}, "seq": {"type": "integer", "minimum": 0}}}`)

// outboxEnv is a schema with the outbox's table, a connection to the
// broker, a queue of the test's own and a raw consumer of it.
type outboxEnv struct {
	t      *testing.T
	pool   *pgxpool.Pool
	schema string
	c      *runtime.Connection
	ob     *pgstore.Outbox
	queue  string
	got    chan amqp.Delivery
	ch     *amqp.Channel
	once   sync.Once
}

func newOutboxEnv(t *testing.T, name string) *outboxEnv {
	t.Helper()
	pool, schema := pgtest.Schema(t, name)
	ctx := ctxFor(t, 30*time.Second)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	c := acemqtest.Dial(t)
	ob, err := pgstore.NewOutbox(c)
	if err != nil {
		t.Fatal(err)
	}
	e := &outboxEnv{t: t, pool: pool, schema: schema, c: c, ob: ob, queue: acemqtest.Queue(t, "outbox"), got: make(chan amqp.Delivery, 100000)}
	e.declare()
	return e
}

// declare declares the queue, on a channel kept for consume.
func (e *outboxEnv) declare() {
	conn, err := amqp.Dial(acemqtest.URL())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(e.queue, true, false, false, false, nil); err != nil {
		e.t.Fatal(err)
	}
	e.ch = ch
}

// consume copies every delivery of the queue into e.got, from the first
// receive on.
func (e *outboxEnv) consume() {
	ds, err := e.ch.Consume(e.queue, "", true, false, false, false, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	go func() {
		for d := range ds {
			e.got <- d
		}
	}()
}

// write writes ev to the outbox in a transaction of its own, to the
// test's queue through the default exchange.
func (e *outboxEnv) write(ctx context.Context, ev event, opts ...runtime.PublishOption) {
	e.t.Helper()
	e.writeTo(ctx, e.queue, ev, opts...)
}

// writeTo is write to queue q.
func (e *outboxEnv) writeTo(ctx context.Context, q string, ev event, opts ...runtime.PublishOption) {
	e.t.Helper()
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		return pgstore.PublishTx(ctx, tx, e.ob, eventType, "", ev, append([]runtime.PublishOption{runtime.WithRoutingKey(q)}, opts...)...)
	})
	if err != nil {
		e.t.Fatalf("write %+v: %v", ev, err)
	}
}

// relay runs a relay until the test ends.
func (e *outboxEnv) relay(opts ...pgstore.RelayOption) *pgstore.Relay {
	r := pgstore.NewRelay(e.ob, e.pool, append([]pgstore.RelayOption{pgstore.WithRelayLogger(quiet())}, opts...)...)
	e.run(r)
	return r
}

func (e *outboxEnv) run(r *pgstore.Relay) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := r.Run(ctx); err != nil {
			e.t.Errorf("relay: %v", err)
		}
	}()
	e.t.Cleanup(func() { cancel(); wg.Wait() })
}

// receive waits for n deliveries.
func (e *outboxEnv) receive(n int, within time.Duration) []amqp.Delivery {
	e.t.Helper()
	e.once.Do(e.consume)
	var out []amqp.Delivery
	deadline := time.After(within)
	for len(out) < n {
		select {
		case d := <-e.got:
			out = append(out, d)
		case <-deadline:
			e.t.Fatalf("received %d of %d messages on %s within %v", len(out), n, e.queue, within)
		}
	}
	return out
}

// queued is how many messages the queue holds (before the first receive).
func (e *outboxEnv) queued() int {
	e.t.Helper()
	q, err := e.ch.QueueDeclarePassive(e.queue, true, false, false, false, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return q.Messages
}

// rows counts the outbox's rows.
func (e *outboxEnv) rows(ctx context.Context) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM acemq_outbox").Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// waitRows waits until the outbox holds n rows.
func (e *outboxEnv) waitRows(ctx context.Context, n int, within time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := e.rows(ctx)
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the outbox holds %d rows after %v, want %d", got, within, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor waits until query (one boolean) is true.
func (e *outboxEnv) waitFor(ctx context.Context, what string, within time.Duration, query string, args ...any) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var ok bool
		if err := e.pool.QueryRow(ctx, query, args...).Scan(&ok); err != nil {
			e.t.Fatalf("%s: %v", query, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("not %s after %v (%s)", what, within, query)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func decodeEvent(t *testing.T, d amqp.Delivery) event {
	t.Helper()
	var ev event
	if err := json.Unmarshal(d.Body, &ev); err != nil {
		t.Fatalf("body %q: %v", d.Body, err)
	}
	return ev
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// openRoute makes a refused row's destination routable: a queue of that
// name (durable and auto-deleted: RabbitMQ 4.3 refuses a transient
// non-exclusive queue), consumed with auto-ack.
func (e *outboxEnv) openRoute(name string) <-chan amqp.Delivery {
	e.t.Helper()
	if _, err := e.ch.QueueDeclare(name, true, true, false, false, nil); err != nil {
		e.t.Fatal(err)
	}
	ds, err := e.ch.Consume(name, "", true, false, false, false, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}
