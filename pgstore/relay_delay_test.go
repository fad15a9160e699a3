package pgstore_test

import (
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A delayed outbox row (PublishTx with runtime.WithDelay, what a generated
// …AfterTx writes) is relayed into the delay topology for the time left
// when the relay reads it, so it arrives at its exchange when it was due
// from the commit, not before and not a relay's start later: written with
// 4 s at t0, relayed at t0 + 2 s (2 s left), it arrives 4 s after t0, and
// its row is gone long before (the broker holds it, not the outbox).
func TestDelayedRowArrivesAfterItsDelay(t *testing.T) {
	e := newOutboxEnv(t, "outbox_delay")
	ctx := ctxFor(t, 60*time.Second)
	ex := e.queue + ".ex"
	prefix := e.queue + wire.DelayPrefixSuffix
	top := &runtime.Topology{
		Exchanges:   []runtime.Exchange{{Name: ex, Kind: amqp.ExchangeDirect}},
		Delay:       runtime.Classic,
		DelayPrefix: prefix,
	}
	t.Cleanup(func() {
		for n := range wire.DelayLevels {
			_, _ = e.ch.QueueDelete(wire.DelayLevel(prefix, n), false, false, false)
			_ = e.ch.ExchangeDelete(wire.DelayLevel(prefix, n), false, false)
		}
		_ = e.ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
		_ = e.ch.ExchangeDelete(ex, false, false)
	})
	// The relay publishes on e.c: the delay topology is the one it declared.
	if err := e.c.Declare(ctx, top); err != nil {
		t.Fatal(err)
	}
	if err := e.ch.QueueBind(e.queue, "remind", ex, false, nil); err != nil {
		t.Fatal(err)
	}
	e.once.Do(e.consume)

	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		return pgstore.PublishTx(ctx, tx, e.ob, eventType, ex, event{Key: "later", Seq: 1},
			runtime.WithRoutingKey("remind"), runtime.WithDelay(4*time.Second), runtime.WithMessageID("delayed-row-1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second)
	e.relay(pgstore.WithRelayPoll(100 * time.Millisecond))
	e.waitRows(ctx, 0, 1500*time.Millisecond) // relayed into the levels at once
	select {
	case d := <-e.got:
		t.Fatalf("arrived %s after the commit, before its 4 s: %s", time.Since(t0), d.Body)
	case <-time.After(time.Until(t0.Add(3900 * time.Millisecond))):
	}
	d := e.receive(1, 5*time.Second)[0]
	late := time.Since(t0)
	if late < 4*time.Second || late > 5500*time.Millisecond {
		t.Errorf("arrived %s after the commit, want 4s..5.5s (its delay from the commit, not from the relay)", late)
	}
	if ev := decodeEvent(t, d); ev.Key != "later" || d.MessageId != "delayed-row-1" {
		t.Errorf("got %+v id %q, want later delayed-row-1", ev, d.MessageId)
	}
	if d.Headers[wire.HeaderDelayRoutingKey] != "remind" {
		t.Errorf("%s %v, want remind", wire.HeaderDelayRoutingKey, d.Headers[wire.HeaderDelayRoutingKey])
	}
	if s, k, ok := wire.ParseDelayRoutingKey(d.RoutingKey); !ok || s != 2 || k != ex {
		t.Errorf("routing key %q: want the delay key of the 2 s left (relayed 2 s after the commit) to %s", d.RoutingKey, ex)
	}
	if _, ok := d.Headers[wire.HeaderDelayUntil]; !ok {
		t.Errorf("no %s on the delivery: %v", wire.HeaderDelayUntil, d.Headers)
	}
}
