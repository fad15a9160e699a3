package runtime_test

// The retry ladder, against the broker: waits in memory that do not block
// the consumer, jitter, waits in rungs, a missing rung, and shutdown.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestWaitInMemoryDoesNotBlock(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "nonblocking")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(2, 5*time.Second)), func(m seen) runtime.Ack {
		if m.Body == "slow" && m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("wait 5s"))
		}
		return runtime.Accept()
	}, runtime.WithPrefetch(50), runtime.WithConcurrency(1))

	publishText(t, c, q, "slow")
	others := make([]string, 200)
	for i := range others {
		others[i] = fmt.Sprintf("other-%03d", i)
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", others, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}

	isSlow2 := func(c seen) bool { return c.Body == "slow" && c.Envelope.Attempt == 2 }
	calls := rec.waitFor(t, 20*time.Second, "the slow message's second attempt", func(calls []seen) bool {
		return slices.ContainsFunc(calls, isSlow2)
	})
	back := slices.IndexFunc(calls, isSlow2)
	if calls[0].Body != "slow" {
		t.Fatalf("the slow message was not handled first: %s", describe(calls[:1]))
	}
	handledBefore := 0
	for _, c := range calls[1:back] {
		if c.Body != "slow" {
			handledBefore++
		}
	}
	if handledBefore != 200 {
		t.Errorf("%d of the 200 other messages were handled before the slow one came back, want all 200", handledBefore)
	}
	if gap := calls[back].At.Sub(calls[0].At); gap < 5*time.Second {
		t.Errorf("the slow message came back after %s, want ≥ 5s (Fixed has no jitter)", gap)
	}
	if lastOther := calls[back-1].At.Sub(calls[0].At); lastOther > 5*time.Second {
		t.Errorf("the 200 others took %s behind a 5s wait", lastOther)
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	const n = 12
	const slack = 400 * time.Millisecond
	gaps := func(t *testing.T, policy runtime.RetryPolicy, attempts int) [][]time.Duration {
		q := brokertest.Queue(t, "jitter")
		rawQueue(t, q, nil)
		c := dial(t)
		_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
			if m.Envelope.Attempt < attempts {
				return runtime.Retry(errors.New("again"))
			}
			return runtime.Accept()
		}, runtime.WithPrefetch(2*n))
		bodies := make([]string, n)
		for i := range bodies {
			bodies[i] = fmt.Sprint("m", i)
		}
		if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
			t.Fatalf("PublishBatch: %v", err)
		}
		calls := rec.waitN(t, n*attempts, 20*time.Second)
		at := map[string][]time.Time{}
		for _, c := range calls {
			if len(at[c.Body])+1 != c.Envelope.Attempt {
				t.Fatalf("%s: attempt %d out of order: %s", c.Body, c.Envelope.Attempt, describe(calls))
			}
			at[c.Body] = append(at[c.Body], c.At)
		}
		out := make([][]time.Duration, attempts-1) // out[i]: the waits after attempt i+1
		for _, ts := range at {
			for i := 1; i < len(ts); i++ {
				out[i-1] = append(out[i-1], ts[i].Sub(ts[i-1]))
			}
		}
		return out
	}

	t.Run("exponential within ±20%", func(t *testing.T) {
		t.Parallel()
		g := gaps(t, runtime.Exponential(3, 500*time.Millisecond, time.Second).WithJitter(0.2), 3)
		for i, nominal := range []time.Duration{500 * time.Millisecond, time.Second} {
			lo, hi := nominal*8/10, nominal*12/10+slack
			for _, d := range g[i] {
				if d < lo || d > hi {
					t.Errorf("wait after attempt %d: %s, want within [%s, %s]", i+1, d, lo, hi)
				}
			}
			// Jitter goes both ways: with 12 messages some wait clearly
			// less than the nominal delay (chance of none: 0.55^12).
			if !slices.ContainsFunc(g[i], func(d time.Duration) bool { return d < nominal*98/100 }) {
				t.Errorf("waits after attempt %d %v: none below %s, so no jitter was applied", i+1, g[i], nominal)
			}
		}
	})
	t.Run("fixed has none", func(t *testing.T) {
		t.Parallel()
		g := gaps(t, runtime.Fixed(2, 500*time.Millisecond), 2)
		for _, d := range g[0] {
			if d < 500*time.Millisecond || d > 500*time.Millisecond+slack {
				t.Errorf("Fixed(2, 500ms) waited %s, want within [500ms, %s]", d, 500*time.Millisecond+slack)
			}
		}
	})
}

// pollDepth polls queue's depth every 10ms until stop is closed and
// returns the largest depth it saw.
func pollDepth(t *testing.T, queue string, stop <-chan struct{}) <-chan int {
	ch := rawChannel(t)
	out := make(chan int, 1)
	go func() {
		most := 0
		for {
			if q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil); err == nil {
				most = max(most, q.Messages)
			}
			select {
			case <-stop:
				out <- most
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return out
}

func TestWaitInBrokerGoesThroughRung(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "rung")
	// Exponential: jitter 0.2 by default, which must not touch a broker wait.
	policy := runtime.Exponential(2, time.Second, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	rung := q + ".retry.1s"
	wantArg(t, rung, brokertest.QueueDetails(t, rung).Arguments, "x-message-ttl", 1000)

	stop := make(chan struct{})
	most := pollDepth(t, rung, stop)
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		if m.Envelope.Attempt == 1 {
			return runtime.Retry(errors.New("once"))
		}
		return runtime.Accept()
	}, runtime.WithConcurrency(3))
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", []string{"a", "b", "c"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	calls := rec.waitN(t, 6, wait)
	close(stop)
	if got := <-most; got != 3 {
		t.Errorf("%s held at most %d messages, want all 3 (a broker wait is never jittered into memory)", rung, got)
	}
	first := map[string]seen{}
	for _, c := range calls {
		if c.Envelope.Attempt == 1 {
			first[c.Body] = c
			continue
		}
		f := first[c.Body]
		if c.Envelope.Attempt != 2 || c.Envelope.ID != f.Envelope.ID || c.Envelope.Error != "once" {
			t.Errorf("%s came back with attempt %d id %q error %q; want 2, %q, once", c.Body, c.Envelope.Attempt, c.Envelope.ID, c.Envelope.Error, f.Envelope.ID)
		}
		if gap := c.At.Sub(f.At); gap < time.Second {
			t.Errorf("%s came back after %s, want ≥ 1s (the rung's TTL)", c.Body, gap)
		}
	}
	if n := depth(t, rung); n != 0 {
		t.Errorf("%s still holds %d", rung, n)
	}
}

func TestMissingRungWaitsInMemory(t *testing.T) {
	t.Parallel()
	// The publisher either has its own connection or shares the consumer's
	// (as a service that consumes and publishes does): the set-aside copy
	// to the missing rung then goes out on the channel where the original
	// publish may still be waiting for its confirm.
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "publisher on its own connection", true: "publisher on the consumer's connection"}[shared]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "norung")
			policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			c := dial(t, runtime.WithMeterProvider(mp))
			declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
			ch := rawChannel(t)
			if _, err := ch.QueueDelete(q+".retry.1s", false, false, false); err != nil {
				t.Fatalf("delete the rung: %v", err)
			}

			_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
				if m.Envelope.Attempt == 1 {
					return runtime.Retry(errors.New("the rung is gone"))
				}
				return runtime.Accept()
			})
			publisher := c
			if !shared {
				publisher = dial(t)
			}
			publishText(t, publisher, q, "lost rung")
			calls := rec.waitN(t, 2, wait)
			if calls[1].Envelope.Attempt != 2 || calls[1].Envelope.ID != calls[0].Envelope.ID {
				t.Errorf("second call: attempt %d id %q, want 2 and %q", calls[1].Envelope.Attempt, calls[1].Envelope.ID, calls[0].Envelope.ID)
			}
			if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
				t.Errorf("came back after %s, want ≥ 1s waited in memory", gap)
			}
			if n := counter(t, reader, "acemq.retry.rung.missing"); n != 1 {
				t.Errorf("acemq.retry.rung.missing = %v, want 1", n)
			}
			for _, n := range []string{q + ".dlq", q + ".parked"} {
				if d := depth(t, n); d != 0 {
					t.Errorf("%s holds %d, want 0", n, d)
				}
			}
		})
	}
}

// counter sums every data point of the named counter.
func counter(t *testing.T, reader *sdkmetric.ManualReader, name string) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
			if m.Name != name {
				continue
			}
			var sum float64
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sum += float64(p.Value)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					sum += p.Value
				}
			default:
				t.Fatalf("%s is a %T, want a counter", name, m.Data)
			}
			return sum
		}
	}
	t.Fatalf("no metric %s; the provider holds %v", name, names)
	return 0
}

func TestCloseRepublishesHeldRetry(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "close.held")
	rawQueue(t, q, nil)
	c := dial(t)
	cs, rec := consume(t, c, q, ptr(runtime.Fixed(3, 10*time.Second)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("held"))
	})
	publishText(t, c, q, "keep me")
	call := rec.waitN(t, 1, wait)[0]
	time.Sleep(200 * time.Millisecond) // let the retry be held

	start := time.Now()
	if err := cs.Close(ctxFor(t, 8*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close took %s: a held retry is republished at once, not waited for", took)
	}
	waitDepth(t, q, 1, 3*time.Second)
	d := getOne(t, q, time.Second)
	attempt, isInt64 := d.Headers[wire.HeaderAttempt].(int64)
	if !isInt64 || attempt != 2 {
		t.Errorf("x-acemq-attempt = %#v, want int64(2)", d.Headers[wire.HeaderAttempt])
	}
	if got := headerString(t, d, wire.HeaderID); got != call.Envelope.ID {
		t.Errorf("x-acemq-id = %q, want %q", got, call.Envelope.ID)
	}
	if got := headerString(t, d, wire.HeaderError); got != "held" {
		t.Errorf("x-acemq-error = %q, want held", got)
	}
	if string(d.Body) != "keep me" {
		t.Errorf("body = %q", d.Body)
	}
	if n := depth(t, q+".dlq"); n != 0 {
		t.Errorf("%s.dlq holds %d, want 0", q, n)
	}
	if n := rec.len(); n != 1 {
		t.Errorf("handler called %d times, want 1", n)
	}
}

func TestCloseLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "close.inflight")
	rawQueue(t, q, nil)
	c := dial(t)
	var finished atomic.Bool
	started := make(chan struct{}, 1)
	cs, _ := consume(t, c, q, nil, func(seen) runtime.Ack {
		started <- struct{}{}
		time.Sleep(500 * time.Millisecond)
		finished.Store(true)
		return runtime.Accept()
	})
	publishText(t, c, q, "in flight")
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the handler never started")
	}
	if err := cs.Close(ctxFor(t, 8*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !finished.Load() {
		t.Errorf("Close returned before the in-flight handler finished")
	}
	time.Sleep(200 * time.Millisecond)
	if n := depth(t, q); n != 0 {
		t.Errorf("%s holds %d after Close: the finished handler's Accept was not acked", q, n)
	}
}

func TestRungTwiceThenDeadLetterHasNoXDeath(t *testing.T) {
	t.Parallel()
	// Through the same rung twice: a copy that kept x-death (which names
	// the rung with reason expired) would be dropped by the broker's cycle
	// detection on its second pass.
	q := brokertest.Queue(t, "rung.twice")
	policy := runtime.Fixed(3, time.Second).WithWaitInBrokerFrom(time.Second)
	c := dial(t)
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy}))
	_, rec := consume(t, c, q, &policy, func(m seen) runtime.Ack {
		return runtime.Retry(fmt.Errorf("down %d", m.Envelope.Attempt))
	})
	publishText(t, c, q, "round and round")
	d := getOne(t, q+".dlq", wait)
	if got := headerString(t, d, wire.HeaderError); got != "gave up after 3 attempts: down 3" {
		t.Errorf("x-acemq-error = %q", got)
	}
	for k := range d.Headers {
		if k == "x-death" || strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-") {
			t.Errorf("the dead letter carries %s = %v: every republish drops the broker's bookkeeping", k, d.Headers[k])
		}
	}
	calls := rec.all()
	if got := len(calls); got != 3 {
		t.Fatalf("handler called %d times, want 3: %s", got, describe(calls))
	}
	for i, c := range calls {
		if c.Envelope.Attempt != i+1 {
			t.Errorf("call %d: attempt %d", i, c.Envelope.Attempt)
		}
		if i > 0 && c.At.Sub(calls[i-1].At) < time.Second {
			t.Errorf("attempt %d came %s after the previous, want ≥ 1s in the rung", i+1, c.At.Sub(calls[i-1].At))
		}
	}
}

func TestCloseRepublishesEveryHeldRetry(t *testing.T) {
	t.Parallel()
	const n = 30
	q := brokertest.Queue(t, "close.many")
	rawQueue(t, q, nil)
	c := dial(t)
	cs, rec := consume(t, c, q, ptr(runtime.Fixed(3, 10*time.Second)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("held"))
	}, runtime.WithPrefetch(50), runtime.WithConcurrency(4))
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprint("held-", i)
	}
	if err := runtime.PublishBatch(ctxFor(t, 10*time.Second), c, textType, "", bodies, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	rec.waitN(t, n, wait)
	time.Sleep(200 * time.Millisecond)
	if err := cs.Close(ctxFor(t, 8*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitDepth(t, q, n, 3*time.Second)
	got := map[string]int{}
	for _, d := range drain(t, q, n, wait) {
		got[string(d.Body)]++
		if a, ok := d.Headers[wire.HeaderAttempt].(int64); !ok || a != 2 {
			t.Errorf("%s: x-acemq-attempt %#v, want int64(2)", d.Body, d.Headers[wire.HeaderAttempt])
		}
	}
	for _, b := range bodies {
		if got[b] != 1 {
			t.Errorf("%s is on the queue %d times after Close, want once", b, got[b])
		}
	}
}

func TestCloseIsBoundedByContext(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "close.bounded")
	rawQueue(t, q, nil)
	c := dial(t)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	cs, _ := consume(t, c, q, nil, func(seen) runtime.Ack {
		started <- struct{}{}
		<-release
		return runtime.Accept()
	})
	t.Cleanup(func() { close(release) }) // runs before the consumer's cleanup
	publishText(t, c, q, "stuck")
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the handler never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_ = cs.Close(ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close with a 500ms context took %s behind a stuck handler: ctx bounds the drain", took)
	}
}
