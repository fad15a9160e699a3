package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/wire"
)

// delaySetup is a delay topology of the test's own (its own prefix, so
// tests never share acemq.delay.*), an exchange of kind, a queue bound to
// it with key, and a connection that publishes into that topology.
type delaySetup struct {
	prefix, exchange, queue string
	c                       *runtime.Connection
	topo                    *runtime.Topology
}

func newDelaySetup(t *testing.T, typ runtime.QueueType, kind, key string) delaySetup {
	t.Helper()
	q := brokertest.Queue(t, "delay")
	s := delaySetup{prefix: brokertest.Name("d") + wire.DelayPrefixSuffix, exchange: q + ".ex", queue: q}
	s.topo = &runtime.Topology{
		Exchanges:   []runtime.Exchange{{Name: s.exchange, Kind: kind}},
		Queues:      []runtime.Queue{{Name: q}},
		Bindings:    []runtime.Binding{{Queue: q, Exchange: s.exchange, RoutingKey: key}},
		Delay:       typ,
		DelayPrefix: s.prefix,
	}
	t.Cleanup(func() { deleteDelayTopology(s.prefix, s.exchange) })
	s.c = dial(t)
	if err := s.c.Declare(ctxFor(t, 30*time.Second), s.topo); err != nil {
		t.Fatalf("Declare: %v", err)
	}
	return s
}

// deleteDelayTopology deletes a test's levels, its delivery exchange and
// its destination exchange.
func deleteDelayTopology(prefix, exchange string) {
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	for n := range wire.DelayLevels {
		_, _ = ch.QueueDelete(wire.DelayLevel(prefix, n), false, false, false)
		_ = ch.ExchangeDelete(wire.DelayLevel(prefix, n), false, false)
	}
	_ = ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
	_ = ch.ExchangeDelete(exchange, false, false)
}

// arrival is one delivery a delay test's consumer saw, and when.
type arrival struct {
	at         time.Time
	env        runtime.Envelope
	headers    map[string]any
	routingKey string
	body       string
}

// arrivals consumes s.queue and records every delivery.
func (s delaySetup) arrivals(t *testing.T) (func(n int, within time.Duration) []arrival, func() []arrival) {
	t.Helper()
	var mu sync.Mutex
	var got []arrival
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		mu.Lock()
		got = append(got, arrival{time.Now(), m.Envelope, m.Headers, m.RoutingKey, m.Payload})
		mu.Unlock()
		return runtime.Accept()
	}
	spec := runtime.ConsumerSpec{Queue: s.queue, Routes: []runtime.Route{runtime.Handle(textType, h)}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), s.c, spec, runtime.WithoutDeclare())
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })
	all := func() []arrival {
		mu.Lock()
		defer mu.Unlock()
		return append([]arrival(nil), got...)
	}
	wait := func(n int, within time.Duration) []arrival {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if a := all(); len(a) >= n {
				return a
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%d deliveries within %s, want %d", len(all()), within, n)
		return nil
	}
	return wait, all
}

// A message published after 2 s waits in level 1 (2 = binary 10), arrives
// at its exchange 2 s later (not before, and well within +1 s), routed by
// its own key, with its identity, its headers and its routing key as
// published; the handler sees no broker death in its envelope.
func TestPublishWithDelayDelivers(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeDirect, "remind.me")
	wait, _ := s.arrivals(t)
	start := time.Now()
	err := runtime.Publish(ctxFor(t, 10*time.Second), s.c, textType, s.exchange, "later",
		runtime.WithDelay(1500*time.Millisecond), runtime.WithRoutingKey("remind.me"), runtime.WithMessageID("delay-1"), runtime.WithCorrelationID("corr-1"),
		runtime.WithHeaders(map[string]any{"tenant": "t-7"}))
	if err != nil {
		t.Fatalf("Publish WithDelay: %v", err)
	}
	// Confirmed: level 1 holds it (1.5 s is rounded up to 2 s, binary 10).
	if n := depth(t, wire.DelayLevel(s.prefix, 1)); n != 1 {
		t.Errorf("level 1 holds %d messages after the confirm, want 1", n)
	}
	a := wait(1, 10*time.Second)[0]
	late := a.at.Sub(start)
	if late < 2*time.Second || late > 3*time.Second {
		t.Errorf("arrived %s after the publish, want 2s..3s (1.5s rounded up to 2s)", late)
	}
	if a.body != "later" || a.env.ID != "delay-1" || a.env.CorrelationID != "corr-1" || a.env.Attempt != 1 {
		t.Errorf("arrived %q id %q corr %q attempt %d, want later delay-1 corr-1 1", a.body, a.env.ID, a.env.CorrelationID, a.env.Attempt)
	}
	if a.headers["tenant"] != "t-7" {
		t.Errorf("application headers %v, want tenant t-7 kept", a.headers)
	}
	if a.routingKey != "remind.me" {
		t.Errorf("Message.RoutingKey %q, want remind.me (the publish's own)", a.routingKey)
	}
	if a.env.Error != "" || a.env.Queue != "" {
		t.Errorf("Envelope Error %q Queue %q: the levels' expiry is not a death", a.env.Error, a.env.Queue)
	}
	if _, ok := a.headers[wire.HeaderBCC]; ok {
		t.Errorf("the BCC header reached the consumer: %v", a.headers)
	}
}

// The raw delivery, byte for byte as docs/design.md says: the delay
// routing key, x-acemq-delay-until and x-acemq-delay-routing-key, no BCC,
// the x-acemq-* headers of a publish.
func TestDelayedMessageOnTheWire(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeTopic, "remind.*")
	before := time.Now()
	if err := runtime.Publish(ctxFor(t, 10*time.Second), s.c, textType, s.exchange, "raw",
		runtime.WithRoutingKey("remind.later"), runtime.WithDelay(time.Second)); err != nil {
		t.Fatalf("Publish WithDelay: %v", err)
	}
	d := getOne(t, s.queue, 10*time.Second)
	if want := wire.DelayRoutingKey(1, s.exchange); d.RoutingKey != want {
		t.Errorf("routing key %q, want %q", d.RoutingKey, want)
	}
	if d.Headers[wire.HeaderDelayRoutingKey] != "remind.later" {
		t.Errorf("%s = %v, want remind.later", wire.HeaderDelayRoutingKey, d.Headers[wire.HeaderDelayRoutingKey])
	}
	due, err := time.Parse(time.RFC3339Nano, headerString(t, d, wire.HeaderDelayUntil))
	if err != nil || due.Before(before.Add(time.Second).Truncate(time.Millisecond)) || due.After(time.Now()) {
		t.Errorf("%s = %v (%v), want 1 s after the publish", wire.HeaderDelayUntil, d.Headers[wire.HeaderDelayUntil], err)
	}
	if s := headerString(t, d, wire.HeaderDelayUntil); len(s) != len("2026-01-02T15:04:05.000Z") || !strings.HasSuffix(s, "Z") {
		t.Errorf("%s = %q, want RFC 3339 UTC with milliseconds", wire.HeaderDelayUntil, s)
	}
	for _, k := range []string{wire.HeaderID, wire.HeaderAttempt, wire.HeaderFirstSeen, wire.HeaderOrigin} {
		if _, ok := d.Headers[k]; !ok {
			t.Errorf("no %s: %v", k, d.Headers)
		}
	}
	if _, ok := d.Headers[wire.HeaderBCC]; ok {
		t.Errorf("BCC on the wire: %v", d.Headers)
	}
	if d.MessageId != d.Headers[wire.HeaderID] || d.DeliveryMode != amqp.Persistent || d.Type != textType.Name() {
		t.Errorf("properties: message_id %q, delivery_mode %d, type %q", d.MessageId, d.DeliveryMode, d.Type)
	}
}

// Quorum levels: declared with at-least-once dead-lettering and
// reject-publish, and they deliver.
func TestPublishWithDelayQuorumLevels(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Quorum, amqp.ExchangeFanout, "")
	for _, n := range []int{0, 27} {
		q := brokertest.QueueDetails(t, wire.DelayLevel(s.prefix, n))
		if q.Type != "quorum" || q.Arguments[wire.ArgDeadLetterStrategy] != "at-least-once" || q.Arguments[wire.ArgOverflow] != "reject-publish" {
			t.Errorf("level %d: type %q arguments %v, want quorum, at-least-once, reject-publish", n, q.Type, q.Arguments)
		}
	}
	wait, _ := s.arrivals(t)
	start := time.Now()
	if err := runtime.Publish(ctxFor(t, 10*time.Second), s.c, textType, s.exchange, "q", runtime.WithDelay(3*time.Second)); err != nil {
		t.Fatalf("Publish WithDelay: %v", err)
	}
	a := wait(1, 15*time.Second)[0]
	if late := a.at.Sub(start); late < 3*time.Second || late > 4*time.Second {
		t.Errorf("arrived after %s, want 3s..4s", late)
	}
}

// The topology: 28 levels whose TTL is 2^n s and which dead-letter one
// level down (level 0 to the delivery exchange), declared again without
// error; a service that asks for other levels (quorum) is refused with a
// *DeclareError.
func TestDelayTopologyDeclared(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeDirect, "k")
	for _, n := range []int{0, 1, 13, 27} {
		q := brokertest.QueueDetails(t, wire.DelayLevel(s.prefix, n))
		ttl, _ := num(q.Arguments[wire.ArgMessageTTL])
		next := wire.DelayDelivery(s.prefix)
		if n > 0 {
			next = wire.DelayLevel(s.prefix, n-1)
		}
		if ttl != int64(1000)<<n || q.Arguments[wire.ArgDeadLetterExchange] != next || q.Type != "classic" || !q.Durable {
			t.Errorf("level %d: %+v, want durable classic, TTL %d, dead-lettering to %s", n, q, int64(1000)<<n, next)
		}
		if !hasBinding(brokertest.Bindings(t, wire.DelayLevel(s.prefix, n)), wire.DelayLevel(s.prefix, n), wire.DelayLevelPattern(n, true)) {
			t.Errorf("level %d's queue is not bound with %s", n, wire.DelayLevelPattern(n, true))
		}
	}
	if err := s.c.Declare(ctxFor(t, 30*time.Second), s.topo); err != nil {
		t.Errorf("Declare again: %v", err)
	}
	other := *s.topo
	other.Delay = runtime.Quorum
	var de *runtime.DeclareError
	err := s.c.Declare(ctxFor(t, 30*time.Second), &other)
	if !errors.As(err, &de) || de.Kind != "queue" || !wire.IsDelayLevel(de.Name) ||
		de.Argument != wire.ArgQueueType && de.Argument != wire.ArgOverflow && de.Argument != wire.ArgDeadLetterStrategy {
		t.Errorf("Declare with quorum levels over classic ones = %v, want a *DeclareError naming a level and a quorum argument", err)
	}
	d, err := s.topo.Declarations()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Queues) != 1+2+wire.DelayLevels || len(d.ExchangeBindings) != wire.DelayLevels+1 {
		t.Errorf("Declarations: %d queues, %d exchange bindings; want %d and %d", len(d.Queues), len(d.ExchangeBindings), 3+wire.DelayLevels, wire.DelayLevels+1)
	}
}

// A delay of 0 (or a time past) publishes directly; past 2^28−1 s is an
// error and nothing is sent; so is a key a level would route on.
func TestPublishWithDelayEdges(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeDirect, "now")
	ctx := ctxFor(t, 10*time.Second)
	if err := runtime.Publish(ctx, s.c, textType, s.exchange, "zero", runtime.WithRoutingKey("now"), runtime.WithDelay(0)); err != nil {
		t.Fatalf("Publish WithDelay 0: %v", err)
	}
	if err := runtime.Publish(ctx, s.c, textType, s.exchange, "past", runtime.WithRoutingKey("now"), runtime.WithDelay(time.Until(time.Now().Add(-time.Hour)))); err != nil {
		t.Fatalf("PublishAt in the past: %v", err)
	}
	for _, body := range []string{"zero", "past"} {
		d := getOne(t, s.queue, time.Second)
		if string(d.Body) != body || d.RoutingKey != "now" {
			t.Errorf("got %q with key %q, want %q directly", d.Body, d.RoutingKey, body)
		}
		if _, ok := d.Headers[wire.HeaderDelayUntil]; ok {
			t.Errorf("a direct publish carries %s", wire.HeaderDelayUntil)
		}
	}
	err := runtime.Publish(ctx, s.c, textType, s.exchange, "never", runtime.WithRoutingKey("now"), runtime.WithDelay(wire.MaxDelay+time.Second))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !errors.Is(err, wire.ErrDelayTooLong) {
		t.Errorf("Publish WithDelay past the maximum = %v, want ErrInvalidMessage and ErrDelayTooLong", err)
	}
	err = runtime.Publish(ctx, s.c, textType, s.exchange, "bad", runtime.WithRoutingKey("v.1"), runtime.WithDelay(time.Second))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), `word 2 is "1"`) {
		t.Errorf("Publish WithDelay with key v.1 = %v, want ErrInvalidMessage naming word 2", err)
	}
	err = runtime.Publish(ctx, s.c, textType, "", "bad", runtime.WithRoutingKey(s.queue), runtime.WithDelay(time.Second))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), "default exchange") {
		t.Errorf("Publish WithDelay to the default exchange = %v, want ErrInvalidMessage", err)
	}
	for n := range wire.DelayLevels {
		if got := depth(t, wire.DelayLevel(s.prefix, n)); got != 0 {
			t.Errorf("level %d holds %d messages, want none sent", n, got)
		}
	}
}

// A connection whose prefix names no declared topology gets
// ErrExchangeNotFound, saying so.
func TestPublishWithDelayWithoutTopology(t *testing.T) {
	t.Parallel()
	c := dial(t)
	ex := rawExchange(t, amqp.ExchangeDirect)
	// A declaration of the topology under a prefix of the test's own,
	// refused by the broker after it was noted (a queue of another type
	// exists under the first level's name).
	prefix := brokertest.Name("none") + wire.DelayPrefixSuffix
	rawQueue(t, wire.DelayLevel(prefix, wire.DelayLevels-1), amqp.Table{wire.ArgQueueType: "quorum"})
	t.Cleanup(func() { deleteDelayTopology(prefix, "") })
	topo := &runtime.Topology{Delay: runtime.Classic, DelayPrefix: prefix}
	if err := c.Declare(ctxFor(t, 30*time.Second), topo); err == nil {
		t.Fatal("Declare over a quorum level 27 succeeded")
	}
	_ = ex
	err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, ex, "x", runtime.WithRoutingKey("k"), runtime.WithDelay(time.Second))
	if !errors.Is(err, runtime.ErrExchangeNotFound) && !errors.Is(err, runtime.ErrUnroutable) {
		t.Errorf("Publish WithDelay without a topology = %v, want ErrExchangeNotFound or ErrUnroutable", err)
	}
}

// A long delay is held at the level of its highest bit with the key of
// its bits, without waiting for it: 3 days is 259200 s, level 17.
func TestPublishWithDelayLongDelayRoutingKey(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeDirect, "k")
	for _, d := range []time.Duration{72 * time.Hour, wire.MaxDelay} {
		if err := runtime.Publish(ctxFor(t, 10*time.Second), s.c, textType, s.exchange, "long", runtime.WithRoutingKey("k"), runtime.WithDelay(d)); err != nil {
			t.Fatalf("Publish WithDelay %s: %v", d, err)
		}
		sec := int64(d / time.Second)
		level := wire.DelayLevel(s.prefix, wire.DelayTopLevel(sec))
		m := getOne(t, level, 5*time.Second)
		if want := wire.DelayRoutingKey(sec, s.exchange); m.RoutingKey != want {
			t.Errorf("%s in %s with key %q, want %q", d, level, m.RoutingKey, want)
		}
		if _, ok := m.Headers[wire.HeaderBCC]; ok {
			t.Errorf("BCC held in the level: %v", m.Headers)
		}
	}
	if wire.DelayTopLevel(259200) != 17 || wire.DelayTopLevel(int64(wire.MaxDelay/time.Second)) != 27 {
		t.Error("levels of 3 days and the maximum")
	}
}

// An outbox's delayed message (NewOutgoing WithDelay) keeps its destination and
// its due time; PublishOutgoing sends it into the delay topology for the
// time left then.
func TestPublishOutgoingDelayed(t *testing.T) {
	t.Parallel()
	s := newDelaySetup(t, runtime.Classic, amqp.ExchangeDirect, "k")
	wait, _ := s.arrivals(t)
	due := time.Now().Add(2 * time.Second)
	out, err := runtime.NewOutgoing(ctxFor(t, 10*time.Second), s.c, textType, s.exchange, "boxed", runtime.WithRoutingKey("k"), runtime.WithDelay(2*time.Second))
	if err != nil {
		t.Fatalf("NewOutgoing: %v", err)
	}
	if out.Exchange != s.exchange || out.RoutingKey != "k" || out.Msg.Headers[wire.HeaderDelayUntil] == nil {
		t.Errorf("outgoing %s %q %v, want the destination and %s", out.Exchange, out.RoutingKey, out.Msg.Headers, wire.HeaderDelayUntil)
	}
	time.Sleep(500 * time.Millisecond) // the relay's lag: the time left is what waits
	pd, err := s.c.PublishOutgoing(ctxFor(t, 10*time.Second), out)
	if err == nil {
		err = pd.Wait(ctxFor(t, 10*time.Second))
	}
	if err != nil {
		t.Fatalf("PublishOutgoing: %v", err)
	}
	a := wait(1, 10*time.Second)[0]
	if a.at.Before(due) || a.at.After(due.Add(time.Second)) {
		t.Errorf("arrived %s after its due time, want 0..1s", a.at.Sub(due))
	}
	if a.body != "boxed" || a.routingKey != "k" {
		t.Errorf("arrived %q with key %q", a.body, a.routingKey)
	}
}
