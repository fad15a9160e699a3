package runtime_test

// Declare, against the broker: every row of the wire contract's table, read
// back through the management API.

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

func declare(tb testing.TB, c *runtime.Connection, top *runtime.Topology) {
	tb.Helper()
	if err := c.Declare(ctxFor(tb, 10*time.Second), top); err != nil {
		tb.Fatalf("Declare: %v", err)
	}
}

func wantArg(tb testing.TB, queue string, args map[string]any, key string, want any) {
	tb.Helper()
	got, ok := args[key]
	if !ok {
		tb.Errorf("%s: argument %s missing; arguments %v", queue, key, args)
		return
	}
	if wn, isNum := num(want); isNum {
		if gn, _ := num(got); gn != wn {
			tb.Errorf("%s: %s = %v, want %v", queue, key, got, want)
		}
		return
	}
	if got != want {
		tb.Errorf("%s: %s = %#v, want %#v", queue, key, got, want)
	}
}

func TestDeclareRungs(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "topo.rungs")
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: runtime.Exponential(6, 10*s, 300*s)}))

	// The broker rungs (40s 80s 160s, from the 30s threshold) and the
	// spill rungs of the waits held in memory (10s 20s).
	want := []string{q, q + ".dlq", q + ".parked", q + ".retry.10s", q + ".retry.160s", q + ".retry.20s", q + ".retry.40s", q + ".retry.80s"}
	if got := queuesUnder(t, q); !slices.Equal(got, want) {
		t.Fatalf("queues declared = %v, want exactly %v", got, want)
	}
	for _, n := range []int{10, 20, 40, 80, 160} {
		rung := wire.RungQueue(q, time.Duration(n)*time.Second)
		info := brokertest.QueueDetails(t, rung)
		if !info.Durable || info.Type != "classic" {
			t.Errorf("%s: durable %v type %q, want durable classic", rung, info.Durable, info.Type)
		}
		wantArg(t, rung, info.Arguments, "x-message-ttl", n*1000)
		wantArg(t, rung, info.Arguments, "x-dead-letter-exchange", "")
		wantArg(t, rung, info.Arguments, "x-dead-letter-routing-key", q)
		if !hasBinding(brokertest.Bindings(t, rung), wire.RetryExchange, rung) {
			t.Errorf("%s is not bound to %s with key %s: %v", rung, wire.RetryExchange, rung, brokertest.Bindings(t, rung))
		}
	}
	for _, n := range []string{q + ".dlq", q + ".parked"} {
		info := brokertest.QueueDetails(t, n)
		if !info.Durable || info.Type != "classic" {
			t.Errorf("%s: durable %v type %q, want durable classic", n, info.Durable, info.Type)
		}
	}
	if !hasBinding(brokertest.Bindings(t, q+".dlq"), wire.DeadLetterExchange, q+".dlq") {
		t.Errorf("%s.dlq is not bound to acemq.dlx with key %s.dlq: %v", q, q, brokertest.Bindings(t, q+".dlq"))
	}
	for _, ex := range []string{wire.DeadLetterExchange, wire.RetryExchange} {
		if kind, durable := exchangeInfo(t, ex); kind != "direct" || !durable {
			t.Errorf("exchange %s: %s durable=%v, want a durable direct exchange", ex, kind, durable)
		}
	}
	// Without dead_letter: true the queue itself gets no dead-letter target.
	if args := brokertest.QueueDetails(t, q).Arguments; args["x-dead-letter-exchange"] != nil {
		t.Errorf("%s without DeadLetter has x-dead-letter-exchange %v", q, args["x-dead-letter-exchange"])
	}
}

func TestDeclareNoRungsWhenThresholdZero(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "topo.norungs")
	c := dial(t)
	p := runtime.Exponential(6, 10*s, 300*s).WithWaitInBrokerFrom(0)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: p}))
	if got, want := queuesUnder(t, q), []string{q, q + ".dlq", q + ".parked"}; !slices.Equal(got, want) {
		t.Errorf("WithWaitInBrokerFrom(0): queues = %v, want %v", got, want)
	}
}

func TestDeclareDeadLetterQuorumArguments(t *testing.T) {
	t.Parallel()
	c := dial(t)
	dl := brokertest.Queue(t, "topo.dl")
	quorum := brokertest.Queue(t, "topo.quorum")
	limited := brokertest.Queue(t, "topo.limited")
	extra := brokertest.Queue(t, "topo.extra")
	declare(t, c, runtime.NewTopology().
		Queue(runtime.Queue{Name: dl, DeadLetter: true}).
		Queue(runtime.Queue{Name: quorum, Type: runtime.Quorum, DeadLetter: true}).
		Queue(runtime.Queue{Name: limited, Type: runtime.Quorum, DeadLetter: true, DeliveryLimit: 7}).
		Queue(runtime.Queue{Name: extra, Arguments: map[string]any{"x-max-length": 1000, "x-overflow": "reject-publish"}}))

	args := brokertest.QueueDetails(t, dl).Arguments
	wantArg(t, dl, args, "x-dead-letter-exchange", "acemq.dlx")
	wantArg(t, dl, args, "x-dead-letter-routing-key", dl+".dlq")

	if info := brokertest.QueueDetails(t, quorum); info.Type != "quorum" || !info.Durable {
		t.Errorf("%s: type %q durable %v, want a durable quorum queue", quorum, info.Type, info.Durable)
	}
	if info := brokertest.QueueDetails(t, quorum+".dlq"); info.Type != "classic" {
		t.Errorf("%s.dlq: type %q, want classic whatever the queue's type", quorum, info.Type)
	}
	// A quorum queue always carries an explicit delivery limit and its
	// dead-letter target, so nothing the broker gives up on is dropped.
	args = brokertest.QueueDetails(t, quorum).Arguments
	wantArg(t, quorum, args, "x-delivery-limit", wire.DefaultDeliveryLimit)
	wantArg(t, quorum, args, "x-dead-letter-exchange", "acemq.dlx")
	wantArg(t, quorum, args, "x-dead-letter-routing-key", quorum+".dlq")
	args = brokertest.QueueDetails(t, limited).Arguments
	wantArg(t, limited, args, "x-delivery-limit", 7)
	wantArg(t, limited, args, "x-queue-type", "quorum")
	wantArg(t, limited, args, "x-dead-letter-routing-key", limited+".dlq")
	if args := brokertest.QueueDetails(t, dl).Arguments; args["x-delivery-limit"] != nil {
		t.Errorf("classic %s has x-delivery-limit %v; a classic queue counts no deliveries", dl, args["x-delivery-limit"])
	}

	args = brokertest.QueueDetails(t, extra).Arguments
	wantArg(t, extra, args, "x-max-length", 1000)
	wantArg(t, extra, args, "x-overflow", "reject-publish")
}

func TestDeclareQuorumRungs(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "topo.qrungs")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, QuorumRungs: true,
		Retry: runtime.Fixed(2, 40*s)}))
	rung := q + ".retry.40s"
	info := brokertest.QueueDetails(t, rung)
	if info.Type != "quorum" {
		t.Errorf("%s: type %q, want quorum", rung, info.Type)
	}
	wantArg(t, rung, info.Arguments, "x-message-ttl", 40000)
	wantArg(t, rung, info.Arguments, "x-dead-letter-exchange", "")
	wantArg(t, rung, info.Arguments, "x-dead-letter-routing-key", q)
	wantArg(t, rung, info.Arguments, "x-dead-letter-strategy", "at-least-once")
	wantArg(t, rung, info.Arguments, "x-overflow", "reject-publish")
}

func TestDeclareExchangeAndBinding(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "topo.bind")
	ex := brokertest.Name("ex")
	t.Cleanup(func() { deleteExchange(ex) })
	declare(t, c, runtime.NewTopology().
		Exchange(ex, "topic").
		Queue(runtime.Queue{Name: q}).
		Bind(q, ex, "order.created"))
	if kind, durable := exchangeInfo(t, ex); kind != "topic" || !durable {
		t.Errorf("exchange %s: %s durable=%v, want durable topic", ex, kind, durable)
	}
	if !hasBinding(brokertest.Bindings(t, q), ex, "order.created") {
		t.Errorf("%s not bound to %s with order.created: %v", q, ex, brokertest.Bindings(t, q))
	}
}

func TestDeclareTwiceIsHarmless(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "topo.twice")
	top := runtime.NewTopology().Queue(runtime.Queue{Name: q, DeadLetter: true,
		Retry: runtime.Fixed(3, 40*s), Arguments: map[string]any{"x-max-length": 10}})
	declare(t, c, top)
	publishText(t, c, q, "still here")
	declare(t, c, top)
	if n := depth(t, q); n != 1 {
		t.Errorf("after declaring twice %s holds %d messages, want 1", q, n)
	}
	if got, want := queuesUnder(t, q), []string{q, q + ".dlq", q + ".parked", q + ".retry.40s"}; !slices.Equal(got, want) {
		t.Errorf("queues = %v, want %v", got, want)
	}
}

func TestDeclareOverDifferentArguments(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "topo.conflict")
	// The queue exists with another dead-letter exchange; only that
	// argument differs from what the topology asks for.
	rawQueue(t, q, amqp.Table{"x-dead-letter-exchange": "elsewhere", "x-dead-letter-routing-key": q + ".dlq"})
	c := dial(t)
	err := c.Declare(ctxFor(t, 10*time.Second), runtime.NewTopology().Queue(runtime.Queue{Name: q, DeadLetter: true}))
	if err == nil {
		t.Fatalf("Declare over %s with another x-dead-letter-exchange = nil, want a *DeclareError", q)
	}
	var de *runtime.DeclareError
	if !errors.As(err, &de) {
		t.Fatalf("Declare error %q (%T) is not a *runtime.DeclareError", err, err)
	}
	if de.Name != q || de.Kind != "queue" || de.Argument != "x-dead-letter-exchange" {
		t.Errorf("DeclareError{Kind %q, Name %q, Argument %q}, want queue %q and x-dead-letter-exchange", de.Kind, de.Name, de.Argument, q)
	}
	if msg := err.Error(); !strings.Contains(msg, q) || !strings.Contains(msg, "x-dead-letter-exchange") {
		t.Errorf("error %q must name the queue and the argument", msg)
	}
	// The connection survives a refused declaration (the broker closed a
	// channel, not the connection).
	if n, err := c.MessageCount(ctxFor(t, 10*time.Second), q); err != nil || n != 0 {
		t.Errorf("MessageCount after a refused Declare = %d, %v; want 0, nil", n, err)
	}
}

// A quorum queue without a dead-letter target, a negative delivery limit
// (the -1 trap) and a limit on a classic queue are refused before anything
// is declared.
func TestDeclareRefusesQuorumThatCouldDrop(t *testing.T) {
	t.Parallel()
	c := dial(t)
	q := brokertest.Queue(t, "topo.refused")
	for _, tc := range []struct {
		queue runtime.Queue
		says  string
	}{
		{runtime.Queue{Name: q, Type: runtime.Quorum}, "needs a dead-letter target"},
		{runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, DeliveryLimit: -1}, "-1 is unlimited on RabbitMQ 4 but drops after one delivery on 3.10"},
		{runtime.Queue{Name: q, DeliveryLimit: 5}, "quorum queues only"},
	} {
		err := c.Declare(ctxFor(t, 10*time.Second), runtime.NewTopology().Queue(tc.queue))
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), q) {
			t.Errorf("Declare(%+v) = %v, want an error naming %s that says %q", tc.queue, err, q, tc.says)
		}
	}
	if names := queuesUnder(t, q); len(names) != 0 {
		t.Errorf("a refused topology declared %v", names)
	}
}

// A quorum queue declared before quorum queues got a delivery limit and a
// dead-letter target (by an older version, or by hand) cannot be changed in
// place: Declare says which argument and what to do.
func TestDeclareOverAnOlderQuorumQueue(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "topo.olderquorum")
	rawQueue(t, q, amqp.Table{"x-queue-type": "quorum"})
	c := dial(t)
	err := c.Declare(ctxFor(t, 10*time.Second), runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true}))
	var de *runtime.DeclareError
	if !errors.As(err, &de) {
		t.Fatalf("Declare over an older quorum queue = %v, want a *DeclareError", err)
	}
	switch de.Argument {
	case "x-delivery-limit", "x-dead-letter-exchange", "x-dead-letter-routing-key":
	default:
		t.Errorf("DeclareError.Argument %q, want the delivery limit or a dead-letter argument", de.Argument)
	}
	if msg := err.Error(); !strings.Contains(msg, "drain it and declare it again, or move to a new queue name") || !strings.Contains(msg, q) {
		t.Errorf("error %q must name the queue and say what to do", msg)
	}
}
