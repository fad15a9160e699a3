//go:build faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The delay topology across a broker restart (issue 40's proof): N
// messages with random delays (to the millisecond, uniform between 1 s and
// the maximum) published through the levels, the node's application
// stopped and started (stop_app, start_app: every queue stops and recovers
// from disk) in the middle of the delays, then every message arrives once,
// none early, each within +1 s of its due time (x-acemq-delay-until, the
// delay rounded up to whole seconds) unless one of its hops fell while the
// broker was down, which holds it up to that long more. Classic levels'
// hops are at-most-once: a message whose hop is under way as the node
// stops may be lost (at most 1% of those that met the outage, else the
// test fails); quorum levels' lose none.
//
// The suite's run keeps CI bounded: 1,000 messages, 1–30 s, classic
// levels, and quorum levels too on RabbitMQ 4.x. The full run is
// the same test with
//
//	ACEMQ_DELAY_N=10000 ACEMQ_DELAY_MAX=10m ACEMQ_DELAY_LEVELS=classic \
//	  go test -tags faults -count=1 -timeout 40m -v -run '^TestFaultDelayRestart$' ./internal/faults/
//
// (docs/delayed-delivery.md has its figures). Each run prints
//
//	fault=delay-restart levels=classic messages=N lost=0 duplicated=0 redelivered=… late_p50_ms=… late_p99_ms=… max_late_ms=… outage_ms=… touched=… untouched_max_late_ms=…
//
// where duplicated counts the second copies not marked redelivered (the
// levels'), redelivered those the broker gave again because the consumer
// had not settled them when the restart closed its connection, the
// late_* figures are over every message (its first copy), touched counts the
// messages one of whose hops (the expiry of a level, or the arrival in the
// destination queue) fell in the outage, and untouched_max_late_ms is the
// worst of the others.
func TestFaultDelayRestart(t *testing.T) {
	n := envInt(t, "ACEMQ_DELAY_N", 1000)
	maxDelay := envDuration(t, "ACEMQ_DELAY_MAX", 30*time.Second)
	Require(t)
	levels := []runtime.QueueType{runtime.Classic, runtime.Quorum}
	var o struct {
		Version string `json:"rabbitmq_version"`
	}
	if err := Mgmt("GET", "overview?columns=rabbitmq_version", &o); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(o.Version, "3.") {
		// Measured on 3.10.8: quorum levels across stop_app/start_app
		// lost 26, then 7, of 1,000 messages (left in levels 01–03 more
		// than 3 minutes past their TTL) and delivered 4 twice
		// (docs/delayed-delivery.md: quorum levels want RabbitMQ 4.0 or
		// later).
		t.Logf("RabbitMQ %s: classic levels only (quorum levels want 4.0 or later)", o.Version)
		levels = levels[:1]
	}
	if v := os.Getenv("ACEMQ_DELAY_LEVELS"); v != "" {
		levels = []runtime.QueueType{runtime.QueueType(v)}
	}
	for _, typ := range levels {
		t.Run(string(typ), func(t *testing.T) { delayRestart(t, typ, n, maxDelay) })
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 2*time.Second {
		t.Fatalf("%s=%q: want a duration of 2s or more", name, v)
	}
	return d
}

// delayArrival is one delivery of a message: when, and whether the broker
// marked it redelivered.
type delayArrival struct {
	at          time.Time
	redelivered bool
}

func delayRestart(t *testing.T, typ runtime.QueueType, n int, maxDelay time.Duration) {
	ex := Name("delayex")
	prefix := ex + wire.DelayPrefixSuffix
	top := func(tp *runtime.Topology, q string) {
		tp.Exchanges = []runtime.Exchange{{Name: ex, Kind: amqp.ExchangeDirect}}
		// Quorum levels deliver to a quorum queue (which needs its dlq).
		tp.Queues = []runtime.Queue{{Name: q, Type: typ, DeadLetter: typ == runtime.Quorum}}
		tp.Bindings = []runtime.Binding{{Queue: q, Exchange: ex, RoutingKey: "due"}}
		tp.Delay, tp.DelayPrefix = typ, prefix
	}
	q := queue(t, "delayrestart", top)
	t.Cleanup(func() { deleteDelayTopology(prefix, ex) })
	leakCheck(t)
	t.Cleanup(func() { _, _ = Ctl("start_app") })

	c := dialQuiet(t, URL())
	pub := dialQuiet(t, URL())
	tp := runtime.NewTopology()
	top(tp, q)
	// The publisher publishes into the topology it declared (its prefix).
	if err := pub.Declare(ctxFor(t, 30*time.Second), tp); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	got := make(map[int][]delayArrival, n)
	var handled atomic.Int64
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		at := time.Now()
		i, err := strconv.Atoi(m.Payload)
		if err != nil || i < 0 || i >= n {
			t.Errorf("a delivery %q that was not published", m.Payload)
			return runtime.Accept()
		}
		mu.Lock()
		got[i] = append(got[i], delayArrival{at, m.Redelivered})
		mu.Unlock()
		handled.Add(1)
		return runtime.Accept()
	}
	cs, err := runtime.Consume(ctxFor(t, 20*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(text, h)}},
		runtime.WithoutDeclare(), runtime.WithConcurrency(4), runtime.WithPrefetch(50))
	if err != nil {
		t.Fatal(err)
	}

	// Publish every message before the restart: the proof is about what
	// the broker holds, not about publishing through an outage (the
	// rest of the suite covers that).
	rng := rand.New(rand.NewPCG(40, uint64(n)))
	delays := make([]time.Duration, n)
	// dues[i] is the time just before message i's publish plus its delay
	// rounded up: at most the runtime's x-acemq-delay-until (which the
	// handler does not see), so that lateness is never understated.
	dues := make([]time.Time, n)
	for i := range delays {
		delays[i] = time.Second + time.Duration(rng.Int64N(int64(maxDelay-time.Second)+1)).Truncate(time.Millisecond)
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var pubErr atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s, _ := wire.DelaySeconds(delays[i])
				dues[i] = time.Now().Add(time.Duration(s) * time.Second)
				err := runtime.Publish(ctxFor(t, 30*time.Second), pub, text, ex, strconv.Itoa(i),
					runtime.WithRoutingKey("due"), runtime.WithDelay(delays[i]), runtime.WithMessageID("delay-"+strconv.Itoa(i)))
				if err != nil {
					pubErr.Store(fmt.Errorf("publish %d: %w", i, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	published := time.Since(start)
	if err, _ := pubErr.Load().(error); err != nil {
		t.Fatal(err)
	}

	// The restart, in the middle of the delays.
	time.Sleep(time.Until(start.Add(maxDelay / 2)))
	stopAt := time.Now()
	MustCtl(t, "stop_app")
	MustCtl(t, "start_app")
	backAt := time.Now()
	outage := backAt.Sub(stopAt)

	// Wait for the last due time, plus the outage and a margin, then a
	// little more for a second copy.
	deadline := start.Add(published + maxDelay + time.Second + outage + 30*time.Second)
	for handled.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if h := handled.Load(); h < int64(n) {
		t.Logf("%d of %d arrived by the deadline; waiting: %s", h, n, delayDepths(prefix, q))
		// A message a classic level dropped never comes: wait 30 s more
		// (ACEMQ_DELAY_EXTRA; 3m found 3.10's quorum levels holding
		// messages past their TTL), not minutes of the fault lane's time.
		for wait := time.Now().Add(envDuration(t, "ACEMQ_DELAY_EXTRA", 30*time.Second)); handled.Load() < int64(n) && time.Now().Before(wait); {
			time.Sleep(time.Second)
		}
		t.Logf("then %d: %s", handled.Load(), delayDepths(prefix, q))
	}
	time.Sleep(3 * time.Second)
	closeAll(t, cs, c, pub)

	mu.Lock()
	defer mu.Unlock()
	var lost, duplicated, redelivered, early, touched int
	var late []time.Duration
	var untouchedMax, touchedMax time.Duration
	for i := range n {
		as := got[i]
		if len(as) == 0 {
			lost++
			if !hopInOutage(dues[i], delays[i], stopAt, backAt) {
				t.Errorf("message %d (due %s after the restart) never arrived, and none of its hops met the outage", i, dues[i].Sub(backAt))
			} else {
				touched++
				if typ == runtime.Quorum {
					t.Errorf("message %d never arrived: a hop met the outage, and quorum levels' hops are at-least-once", i)
				}
			}
			continue
		}
		for _, a := range as[1:] {
			if a.redelivered {
				redelivered++
			} else {
				duplicated++
			}
		}
		a := as[0]
		d := a.at.Sub(dues[i])
		if d < -50*time.Millisecond {
			early++
			t.Errorf("message %d arrived %s before its due time", i, -d)
		}
		late = append(late, d)
		if hopInOutage(dues[i], delays[i], stopAt, backAt) {
			touched++
			touchedMax = max(touchedMax, d)
			if d > outage+time.Second {
				t.Errorf("message %d (a hop in the outage) arrived %s after its due time, more than the outage %s + 1s", i, d, outage)
			}
			continue
		}
		untouchedMax = max(untouchedMax, d)
		if d > time.Second {
			t.Errorf("message %d arrived %s after its due time, want within +1s", i, d)
		}
	}
	slices.Sort(late)
	fmt.Printf("fault=delay-restart levels=%s messages=%d lost=%d duplicated=%d redelivered=%d late_p50_ms=%d late_p99_ms=%d max_late_ms=%d outage_ms=%d touched=%d touched_max_late_ms=%d untouched_max_late_ms=%d publish_ms=%d\n",
		typ, n, lost, duplicated, redelivered, quantileMs(late, 0.50), quantileMs(late, 0.99), quantileMs(late, 1),
		outage.Milliseconds(), touched, touchedMax.Milliseconds(), untouchedMax.Milliseconds(), published.Milliseconds())
	// Classic levels' hops are at-most-once: a message whose hop is under
	// way as the node stops can be lost (measured: 1 of 1,000 in one of
	// five runs on 3.10.8, docs/delayed-delivery.md). One that met the
	// outage is allowed to, a few; any other loss fails above.
	if lost > 0 && (typ != runtime.Classic || lost > max(1, touched/100)) {
		t.Errorf("%d of %d messages never arrived (%d met the outage)", lost, n, touched)
	}
	// A second copy the broker marks redelivered is a delivery the
	// consumer had not settled when the restart closed its connection
	// (at most its prefetch): the consumer's at-least-once, which an inbox
	// absorbs, not the levels'. Any other second copy is the levels':
	// none on classic levels (at-most-once); quorum levels dead-letter
	// at-least-once, so hops under way as the node stops are repeated
	// (measured on 4.0.5, 1,000 messages: 1, 5 and 21 second copies, all
	// among the ~620 that met the outage): at most one each of those.
	if duplicated > 0 && (typ != runtime.Quorum || duplicated > touched) {
		t.Errorf("%d second copies the broker did not mark redelivered: the levels delivered them twice (%d met the outage)", duplicated, touched)
	}
	if redelivered > 50 {
		t.Errorf("%d redeliveries, more than the consumer's prefetch (50)", redelivered)
	}
}

// hopInOutage is whether a message due at due after delay d (rounded up
// to whole seconds s) had a hop within a second of [stopAt, backAt]: it
// entered the levels at due − s, left level k (a bit of s that is 1, from
// the highest) 2^k s later, and reached its queue at due.
func hopInOutage(due time.Time, d time.Duration, stopAt, backAt time.Time) bool {
	s, _ := wire.DelaySeconds(d)
	at := due.Add(-time.Duration(s) * time.Second)
	in := func(x time.Time) bool {
		return !x.Before(stopAt.Add(-time.Second)) && !x.After(backAt.Add(time.Second))
	}
	for k := wire.DelayLevels - 1; k >= 0; k-- {
		if s&(1<<k) != 0 {
			at = at.Add(time.Duration(1<<k) * time.Second)
			if in(at) {
				return true
			}
		}
	}
	return in(due)
}

func quantileMs(sorted []time.Duration, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i].Milliseconds()
}

// deleteDelayTopology deletes a test's levels, its delivery exchange and
// its destination exchange.
func deleteDelayTopology(prefix, exchange string) {
	conn, err := amqp.Dial(URL())
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	for k := range wire.DelayLevels {
		_, _ = ch.QueueDelete(wire.DelayLevel(prefix, k), false, false, false)
		_ = ch.ExchangeDelete(wire.DelayLevel(prefix, k), false, false)
	}
	_ = ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
	_ = ch.ExchangeDelete(exchange, false, false)
}

// delayDepths lists the queues of a delay test that hold messages.
func delayDepths(prefix, q string) string {
	var qs []struct {
		Name     string `json:"name"`
		Messages int    `json:"messages"`
	}
	if err := Mgmt("GET", "queues/%2F?columns=name,messages", &qs); err != nil {
		return err.Error()
	}
	var out []string
	for _, x := range qs {
		if x.Messages > 0 && (strings.HasPrefix(x.Name, prefix) || strings.HasPrefix(x.Name, q)) {
			out = append(out, fmt.Sprintf("%s=%d", x.Name, x.Messages))
		}
	}
	return strings.Join(out, " ")
}
