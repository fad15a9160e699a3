package runtime_test

// Quorum queues and their delivery limit, against the broker: the
// runtime's own put-back paths (a set-aside whose copy fails, a requeue)
// never spend the limit unboundedly, and what the broker dead-letters on
// its own reads clearly.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// quorumQueue declares q as a quorum queue with a delivery limit whose
// dead-letter target is q.dlq through acemq.dlx, as the topology does, but
// without declaring q.dlq itself.
func quorumQueue(tb testing.TB, q string, limit int) {
	tb.Helper()
	ch := rawChannel(tb)
	if err := ch.ExchangeDeclare(wire.DeadLetterExchange, amqp.ExchangeDirect, true, false, false, false, nil); err != nil {
		tb.Fatalf("declare %s: %v", wire.DeadLetterExchange, err)
	}
	rawQueue(tb, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": limit,
		"x-dead-letter-exchange": wire.DeadLetterExchange, "x-dead-letter-routing-key": wire.DeadLetterQueue(q)})
}

// declareDLQ declares q.dlq as the topology would, bound to acemq.dlx.
func declareDLQ(tb testing.TB, q string) {
	tb.Helper()
	dlq := wire.DeadLetterQueue(q)
	rawQueue(tb, dlq, nil)
	if err := rawChannel(tb).QueueBind(dlq, dlq, wire.DeadLetterExchange, false, nil); err != nil {
		tb.Fatalf("bind %s: %v", dlq, err)
	}
}

func meter(t *testing.T) (*sdkmetric.ManualReader, runtime.DialOption) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return reader, runtime.WithMeterProvider(mp)
}

// failedCopies is acemq.set_aside.failed so far, 0 before the first.
func failedCopies(t *testing.T, reader *sdkmetric.ManualReader) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "acemq.set_aside.failed" {
				return counter(t, reader, m.Name)
			}
		}
	}
	return 0
}

// A dead letter whose q.dlq is missing is returned to the consumer. The
// delivery is held and its copy tried again on a timer — on a quorum
// queue, nacking it back every pause (as the runtime once did) would spend
// its delivery limit and the broker would drop it, q.dlq being missing.
// Here q.dlq stays missing for ~30 backoffs against a limit of 3: the
// handler runs once, nothing is spent, and the message reaches q.dlq, from
// the runtime with its reason, once q.dlq is declared.
func TestSetAsideFailureHoldsTheDelivery(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "quorum"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "setaside.hold."+kind)
			const limit = 3
			if kind == "quorum" {
				quorumQueue(t, q, limit)
			} else {
				rawQueue(t, q, nil)
			}
			reader, withMeter := meter(t)
			c := dial(t, withMeter)
			cs, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
				return runtime.Reject(errors.New("nowhere to go"))
			}, runtime.WithoutDeclare(), runtime.WithSetAsideTiming(50*time.Millisecond, 100*time.Millisecond, time.Hour))
			publishText(t, c, q, "homeless")
			rec.waitN(t, 1, wait)

			// The pause an old runtime spent per nack was 1s; 30 of them
			// would have spent the limit ten times over.
			deadline := time.Now().Add(wait)
			for failedCopies(t, reader) < 10*limit {
				if time.Now().After(deadline) {
					t.Fatalf("acemq.set_aside.failed = %v after %s, want ≥ %d: the copy is not being retried", failedCopies(t, reader), wait, 10*limit)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if n := rec.len(); n != 1 {
				t.Fatalf("handler called %d times while q.dlq was missing, want 1 (the delivery is held, not nacked back): %s", n, describe(rec.all()))
			}
			if n := depth(t, q); n != 0 {
				t.Errorf("%s holds %d ready messages while its copy is retried, want 0 (held unacked)", q, n)
			}

			declareDLQ(t, q)
			dl := getOne(t, wire.DeadLetterQueue(q), wait)
			if string(dl.Body) != "homeless" {
				t.Errorf("dead letter body %q, want homeless", dl.Body)
			}
			if got := headerString(t, dl, wire.HeaderError); got != "rejected by the handler: nowhere to go" {
				t.Errorf("x-acemq-error %q, want the handler's reason", got)
			}
			if got := headerString(t, dl, wire.HeaderQueue); got != q {
				t.Errorf("x-acemq-queue %q, want %s", got, q)
			}
			if _, byBroker := dl.Headers["x-death"]; byBroker {
				t.Errorf("the dead letter carries x-death %v: the broker dead-lettered it, not the runtime", dl.Headers["x-death"])
			}
			waitDepth(t, q, 0, wait)
			if err := cs.Close(ctxFor(t, 10*time.Second)); err != nil {
				t.Fatalf("Close: %v", err)
			}
			waitDepth(t, q, 0, 5*time.Second)
			if n := depth(t, wire.DeadLetterQueue(q)); n != 0 {
				t.Errorf("%s.dlq holds %d more messages, want exactly one dead letter", q, n)
			}
			if n := rec.len(); n != 1 {
				t.Errorf("handler called %d times, want 1", n)
			}
		})
	}
}

// Past the hold bound (inside the broker's consumer timeout) the delivery
// goes back to its queue, once per bound: one delivery of the limit spent
// per hold, not one per pause.
func TestSetAsideFailureNacksBackOncePastTheHold(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "setaside.bound")
	quorumQueue(t, q, 20)
	const hold = 1500 * time.Millisecond
	c := dial(t)
	cs, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
		return runtime.Reject(errors.New("nowhere to go"))
	}, runtime.WithoutDeclare(), runtime.WithSetAsideTiming(50*time.Millisecond, 200*time.Millisecond, hold))
	publishText(t, c, q, "bounded")
	calls := rec.waitN(t, 3, wait)
	for i := 1; i < len(calls); i++ {
		// About the hold (the nack comes up to one backoff early), far from
		// the 50–200ms between tries of the copy.
		if gap := calls[i].At.Sub(calls[i-1].At); gap < hold/2 {
			t.Errorf("delivery %d came %s after the previous, want about the hold (%s): one nack back per hold, not per try", i+1, gap, hold)
		}
		if !calls[i].Redelivered || calls[i].Envelope.ID != calls[0].Envelope.ID {
			t.Errorf("delivery %d: redelivered %v id %q, want the same message back", i+1, calls[i].Redelivered, calls[i].Envelope.ID)
		}
	}
	if err := cs.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitDepth(t, q, 1, 5*time.Second) // nothing lost
}

// requeue_on_failure counts its attempts with the broker's x-delivery-count
// on a quorum queue (and its own count on a classic one) and, at the
// policy's last attempt, dead-letters through the runtime with the reason
// and x-acemq-queue — not through the broker's delivery limit, and not in
// a loop that never ends.
func TestRequeueOnFailureEndsOnDLQAfterThePolicysAttempts(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"classic", "quorum"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "requeue.bounded."+kind)
			if kind == "quorum" {
				quorumQueue(t, q, wire.DefaultDeliveryLimit)
			} else {
				rawQueue(t, q, nil)
			}
			const attempts = 4
			c := dial(t)
			_, rec := consume(t, c, q, ptr(runtime.Fixed(attempts, time.Hour)), func(seen) runtime.Ack {
				return runtime.Retry(errors.New("flaky"))
			}, runtime.WithRequeueOnFailure())
			publishText(t, c, q, "bounce")

			dl := getOne(t, wire.DeadLetterQueue(q), wait)
			if got, want := headerString(t, dl, wire.HeaderError), fmt.Sprintf("gave up after %d attempts: flaky", attempts); got != want {
				t.Errorf("x-acemq-error %q, want %q", got, want)
			}
			if got := headerString(t, dl, wire.HeaderQueue); got != q {
				t.Errorf("x-acemq-queue %q, want %s", got, q)
			}
			if n, _ := num(dl.Headers[wire.HeaderAttempt]); n != attempts {
				t.Errorf("x-acemq-attempt %v, want %d", dl.Headers[wire.HeaderAttempt], attempts)
			}
			for _, k := range []string{"x-death", "x-first-death-reason", "x-delivery-count"} {
				if v, ok := dl.Headers[k]; ok {
					t.Errorf("the dead letter carries %s %v: it must come from the runtime, without the broker's bookkeeping", k, v)
				}
			}
			time.Sleep(300 * time.Millisecond) // no call after the last attempt
			calls := rec.all()
			if len(calls) != attempts {
				t.Fatalf("handler called %d times, want exactly %d: %s", len(calls), attempts, describe(calls))
			}
			for i, call := range calls {
				if call.Envelope.Attempt != i+1 || call.Envelope.ID != calls[0].Envelope.ID {
					t.Errorf("call %d: attempt %d id %q, want attempt %d of the same message", i+1, call.Envelope.Attempt, call.Envelope.ID, i+1)
				}
			}
			waitDepth(t, q, 0, 5*time.Second)
		})
	}
}

// A message the broker dead-lettered past a quorum queue's delivery limit
// says so when it is pulled from q.dlq: Envelope.Error and Queue come from
// x-death when the runtime did not set it aside itself.
func TestBrokerDeadLetterReadsClearly(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "dlimit.reads")
	quorumQueue(t, q, 1)
	declareDLQ(t, q)
	// A retried copy carries its last failure's plain reason mid-ladder.
	rawPublish(t, q, textMessage("crashy", amqp.Table{wire.HeaderID: "m-1", wire.HeaderAttempt: int64(2), wire.HeaderError: "timeout"}))
	ch := openChannel(t)
	defer ch.Close()
	for i := range 2 { // the limit is 1: the second failed return dead-letters it
		d, ok, err := ch.Get(q, false)
		if err != nil || !ok {
			t.Fatalf("get %d from %s: ok %v err %v", i+1, q, ok, err)
		}
		// basic.reject, "processing failed": RabbitMQ 4.3 counts only
		// that against the delivery limit (a basic.nack, not at all).
		if err := d.Reject(true); err != nil {
			t.Fatalf("reject: %v", err)
		}
	}
	c := dial(t)
	dlq := wire.DeadLetterQueue(q)
	var d *runtime.Delivery
	deadline := time.Now().Add(wait)
	for d == nil {
		var err error
		if d, err = c.Pull(ctxFor(t, 10*time.Second), dlq); err != nil {
			t.Fatalf("Pull %s: %v", dlq, err)
		}
		if d == nil && time.Now().After(deadline) {
			t.Fatalf("nothing on %s: the broker did not dead-letter past the limit", dlq)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer d.Ack(context.Background())
	if want := "dead-lettered by the broker: delivery_limit (last failure: timeout)"; d.Envelope.Error != want {
		t.Errorf("Envelope.Error %q, want %q", d.Envelope.Error, want)
	}
	if d.Envelope.Queue != q || d.Envelope.ID != "m-1" || d.Envelope.Attempt != 2 {
		t.Errorf("Envelope queue %q id %q attempt %d, want %s, m-1, 2", d.Envelope.Queue, d.Envelope.ID, d.Envelope.Attempt, q)
	}
	death, ok := runtime.BrokerDeath(d.Headers)
	if !ok || death.Reason != "delivery_limit" || death.Queue != q {
		t.Errorf("BrokerDeath = %+v, %v; want delivery_limit from %s", death, ok, q)
	}
}

// Quorum rungs (x-dead-letter-strategy: at-least-once, x-overflow:
// reject-publish) carry a retry through the broker and back: the wait is
// the rung's TTL, the message comes back with the rung's x-death (read as
// the ladder working, not as a death), and after the policy's attempts it
// goes to q.dlq. At-least-once dead-lettering needs RabbitMQ 3.10 or later.
func TestQuorumRungsCarryTheRetry(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "qrungs.flow")
	policy := runtime.Fixed(3, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true,
		QuorumRungs: true, Retry: policy}))
	rung := wire.RungQueue(q, time.Second)
	info := brokertest.QueueDetails(t, rung)
	if info.Type != "quorum" {
		t.Fatalf("%s: type %q, want quorum", rung, info.Type)
	}
	wantArg(t, rung, info.Arguments, "x-dead-letter-strategy", "at-least-once")
	wantArg(t, rung, info.Arguments, "x-overflow", "reject-publish")

	_, rec := consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("down")) })
	publishText(t, c, q, "patient")
	dl := getOne(t, wire.DeadLetterQueue(q), 3*wait)
	if got := headerString(t, dl, wire.HeaderError); got != "gave up after 3 attempts: down" {
		t.Errorf("x-acemq-error %q, want gave up after 3 attempts: down", got)
	}
	calls := rec.all()
	if len(calls) != 3 {
		t.Fatalf("handler called %d times, want 3: %s", len(calls), describe(calls))
	}
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap < 900*time.Millisecond {
			t.Errorf("attempt %d came %s after the previous, want the rung's 1s", i+1, gap)
		}
		death, ok := runtime.BrokerDeath(calls[i].Headers)
		if !ok || death.Queue != rung || death.Reason != "expired" {
			t.Errorf("attempt %d: BrokerDeath %+v %v, want expired from %s (it waited in the quorum rung)", i+1, death, ok, rung)
		}
		if calls[i].Envelope.Error != "down" || calls[i].Envelope.Queue != "" || calls[i].Envelope.Attempt != i+1 {
			t.Errorf("attempt %d: envelope error %q queue %q attempt %d, want the plain reason, no queue, attempt %d (a rung's expiry is not a death)",
				i+1, calls[i].Envelope.Error, calls[i].Envelope.Queue, calls[i].Envelope.Attempt, i+1)
		}
	}
	waitDepth(t, rung, 0, wait)
}

// A set-aside queue that exists with other arguments — here an operator's
// quorum q.dlq, which RabbitMQ 4 refuses to redeclare without its type —
// does not stop the consumer: it subscribes anyway, and a dead letter still
// lands in that q.dlq. (In a cluster the same path lets a consumer
// subscribe while the node of a classic q.dlq is stopped: 404 "process is
// stopped by supervisor".)
func TestConsumeWithAnOperatorsQuorumDLQ(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "qdlq.operator")
	quorumQueue(t, q, 10)
	rawQueue(t, wire.DeadLetterQueue(q), amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": 1000})
	c := dial(t)
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(errors.New("no")) })
	publishText(t, c, q, "to the quorum dlq")
	rec.waitN(t, 1, wait)
	dl := getOne(t, wire.DeadLetterQueue(q), wait)
	if got := headerString(t, dl, wire.HeaderError); got != "rejected by the handler: no" {
		t.Errorf("x-acemq-error %q", got)
	}
	if info := brokertest.QueueDetails(t, wire.DeadLetterQueue(q)); info.Type != "quorum" {
		t.Errorf("%s.dlq: type %q, want the operator's quorum queue left as it was", q, info.Type)
	}
	if got := queuesUnder(t, q); len(got) != 3 { // q, q.dlq, q.parked
		t.Errorf("queues %v, want q, q.dlq and q.parked", got)
	}
}
