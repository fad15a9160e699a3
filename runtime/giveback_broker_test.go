package runtime_test

// How the runtime gives a delivery back, and what each broker counts
// (docs/reliability.md, "Giving a delivery back: the verb and the count"):
// basic.reject(requeue) where a handler failed (requeue_on_failure),
// basic.nack where the delivery was not processed (Browse, Replay's
// declined messages, a set-aside that failed past its hold, a registry
// hold past its bound, Close's deliveries not started, Pull's
// Delivery.Nack). A quorum queue counts every return in x-delivery-count
// on RabbitMQ 3.10 and 4.0; on 4.3 a basic.nack is not counted, a
// basic.reject is. Each test runs on every broker of the matrix and reads
// the broker's count back.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// brokerVersion is the broker's rabbitmq_version, read once.
var brokerVersion struct {
	once         sync.Once
	major, minor int
	text         string
	err          error
}

// nackCounts reports whether the broker's quorum queues count a
// basic.nack(requeue) as a delivery (every RabbitMQ before 4.3), from the
// management API's rabbitmq_version.
func nackCounts(tb testing.TB) bool {
	tb.Helper()
	brokertest.Require(tb)
	v := &brokerVersion
	v.once.Do(func() {
		var o struct {
			Version string `json:"rabbitmq_version"`
		}
		if v.err = brokertest.Management("overview", &o); v.err != nil {
			return
		}
		v.text = o.Version
		parts := strings.SplitN(o.Version, ".", 3)
		if len(parts) < 2 {
			v.err = fmt.Errorf("rabbitmq_version %q", o.Version)
			return
		}
		v.major, _ = strconv.Atoi(parts[0])
		v.minor, v.err = strconv.Atoi(parts[1])
	})
	if v.err != nil {
		tb.Fatalf("the broker's version: %v", v.err)
	}
	return v.major < 4 || v.major == 4 && v.minor < 3
}

// declareQuorum declares q through c as the topology does (quorum, an
// explicit delivery limit, q.dlq and q.parked), so that c knows q is
// quorum and trusts its x-delivery-count.
func declareQuorum(tb testing.TB, c *runtime.Connection, q string, limit int) {
	tb.Helper()
	tp := runtime.NewTopology().Queue(runtime.Queue{Name: q, Type: runtime.Quorum, DeadLetter: true, DeliveryLimit: limit})
	if err := c.Declare(ctxFor(tb, 20*time.Second), tp); err != nil {
		tb.Fatalf("Declare %s: %v", q, err)
	}
}

// countOf reads x-delivery-count of one delivery (absent reads 0).
func countOf(tb testing.TB, headers map[string]any) int64 {
	tb.Helper()
	v, ok := headers["x-delivery-count"]
	if !ok {
		return 0
	}
	n, ok := num(v)
	if !ok {
		tb.Fatalf("x-delivery-count %v (%T) is not a number", v, v)
	}
	return n
}

// wantGiveBackCount is what a quorum queue counts for n give-backs by
// basic.nack on this broker: n before 4.3, 0 from 4.3.
func wantGiveBackCount(tb testing.TB, n int64) int64 {
	if nackCounts(tb) {
		return n
	}
	return 0
}

// getCount takes the next message of q (basic.get, auto-ack) and returns
// its x-delivery-count and body.
func getCount(tb testing.TB, q string) (int64, string) {
	tb.Helper()
	d := getOne(tb, q, wait)
	return countOf(tb, d.Headers), string(d.Body)
}

// A handler that fails under requeue_on_failure is rejected back
// (basic.reject, requeue): every broker counts it, 4.3 included, so the
// count the next delivery carries is the number of failures.
func TestGiveBackRequeueOnFailureRejects(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.requeue")
	c := dial(t)
	declareQuorum(t, c, q, 20)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(3, time.Hour)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("failed"))
	}, runtime.WithRequeueOnFailure())
	publishText(t, c, q, "fails")
	calls := rec.waitN(t, 3, wait)
	for i, call := range calls[:3] {
		if got := countOf(t, call.Headers); got != int64(i) {
			t.Errorf("delivery %d: x-delivery-count %d, want %d (one per basic.reject, on every broker)", i+1, got, i)
		}
		if call.Envelope.Attempt != i+1 {
			t.Errorf("delivery %d: attempt %d, want %d", i+1, call.Envelope.Attempt, i+1)
		}
	}
	dl := getOne(t, wire.DeadLetterQueue(q), wait)
	if got, want := headerString(t, dl, wire.HeaderError), "gave up after 3 attempts: failed"; got != want {
		t.Errorf("x-acemq-error %q, want %q", got, want)
	}
}

// Browse gives back what it read with one basic.nack: counted before 4.3,
// not on 4.3.
func TestGiveBackBrowseNacks(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.browse")
	c := dial(t)
	declareQuorum(t, c, q, 20)
	publishText(t, c, q, "looked at")
	n, err := c.Browse(ctxFor(t, 30*time.Second), q, 10, func(*runtime.Delivery) error { return nil })
	if err != nil || n != 1 {
		t.Fatalf("Browse: %d, %v; want 1 message read", n, err)
	}
	if got, want := firstCount(t, q), wantGiveBackCount(t, 1); got != want {
		t.Errorf("after a Browse: x-delivery-count %d, want %d on RabbitMQ %s (a nack is not counted from 4.3)", got, want, brokerVersion.text)
	}
}

// firstCount reads x-delivery-count of q's first message and takes it off.
func firstCount(tb testing.TB, q string) int64 {
	tb.Helper()
	n, _ := getCount(tb, q)
	return n
}

// Replay gives back the messages its filter declines with one basic.nack:
// counted before 4.3, not on 4.3.
func TestGiveBackReplayDeclinedNacks(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.replay")
	c := dial(t)
	declareQuorum(t, c, q, 20)
	publishText(t, c, q, "declined")
	res, err := c.Replay(ctxFor(t, 60*time.Second), q, runtime.ReplayOptions{
		RoutingKey: wire.ParkedQueue(q),
		Filter:     func(runtime.Envelope, map[string]any, []byte) bool { return false },
	})
	if err != nil || res.Moved != 0 {
		t.Fatalf("Replay: %+v, %v; want nothing moved", res, err)
	}
	if got, want := firstCount(t, q), wantGiveBackCount(t, 1); got != want {
		t.Errorf("after a declined replay: x-delivery-count %d, want %d on RabbitMQ %s (a nack is not counted from 4.3)", got, want, brokerVersion.text)
	}
}

// A dead letter whose copy cannot be published (q.dlq missing) is held,
// then given back with a basic.nack once past the hold: counted before
// 4.3, not on 4.3.
func TestGiveBackFailedSetAsideNacks(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.setaside")
	c := dial(t)
	// Through c (known quorum), but with q.dlq gone: the copy is returned.
	declareQuorum(t, c, q, 20)
	if _, err := rawChannel(t).QueueDelete(wire.DeadLetterQueue(q), false, false, false); err != nil {
		t.Fatalf("delete %s: %v", wire.DeadLetterQueue(q), err)
	}
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
		return runtime.Reject(errors.New("nowhere to go"))
	}, runtime.WithoutDeclare(), runtime.WithSetAsideTiming(50*time.Millisecond, 200*time.Millisecond, 600*time.Millisecond))
	publishText(t, c, q, "held")
	calls := rec.waitN(t, 3, wait)
	for i, call := range calls[1:3] {
		if got, want := countOf(t, call.Headers), wantGiveBackCount(t, int64(i+1)); got != want {
			t.Errorf("delivery %d after %d holds: x-delivery-count %d, want %d on RabbitMQ %s", i+2, i+1, got, want, brokerVersion.text)
		}
	}
}

// Close gives back the deliveries prefetched but never started with a
// basic.nack before it closes the channel (a closed channel's deliveries
// count as failed on every broker, 4.3 included): counted before 4.3, not
// on 4.3.
func TestGiveBackCloseNacksWhatDidNotStart(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.close")
	c := dial(t)
	declareQuorum(t, c, q, 20)
	for i := range 3 {
		publishText(t, c, q, fmt.Sprintf("m%d", i))
	}
	release := make(chan struct{})
	cs, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
		<-release
		return runtime.Accept()
	}, runtime.WithPrefetch(3))
	rec.waitN(t, 1, wait)
	waitUnacked(t, q, 3)
	closed := make(chan error, 1)
	go func() { closed <- cs.Close(ctxFor(t, 30*time.Second)) }()
	// Once Close has begun no handler starts any more: the two behind the
	// first stay unstarted.
	for deadline := time.Now().Add(wait); !cs.ClosingForTest(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Close did not begin")
		}
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := rec.len(); n != 1 {
		t.Fatalf("%d handler calls, want 1 (the others were never started)", n)
	}
	want := wantGiveBackCount(t, 1)
	for range 2 {
		if got, body := getCount(t, q); got != want {
			t.Errorf("%s given back by Close: x-delivery-count %d, want %d on RabbitMQ %s", body, got, want, brokerVersion.text)
		}
	}
}

// Pull's Delivery.Nack(requeue) is a basic.nack: counted before 4.3, not
// on 4.3.
func TestGiveBackPullNack(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveback.pull")
	c := dial(t)
	declareQuorum(t, c, q, 20)
	publishText(t, c, q, "pulled")
	var d *runtime.Delivery
	deadline := time.Now().Add(wait)
	for d == nil {
		var err error
		if d, err = c.Pull(ctxFor(t, 10*time.Second), q); err != nil {
			t.Fatalf("Pull: %v", err)
		}
		if d == nil && time.Now().After(deadline) {
			t.Fatalf("nothing to pull from %s", q)
		}
	}
	if err := d.Nack(ctxFor(t, 10*time.Second), true); err != nil {
		t.Fatalf("Nack: %v", err)
	}
	if got, want := firstCount(t, q), wantGiveBackCount(t, 1); got != want {
		t.Errorf("after Delivery.Nack: x-delivery-count %d, want %d on RabbitMQ %s", got, want, brokerVersion.text)
	}
}
