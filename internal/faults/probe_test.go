//go:build faults

package faults

// The probe: every message carries its own sequence number; the consumer
// records each one it accepts; at the end q.dlq and q.parked are read, and
// each confirmed message is found handled, dead-lettered, parked — or lost.
// A message handled more than once is a duplicate (at-least-once allows
// them; each fault bounds how many).

import (
	"context"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

type probe struct {
	t    *testing.T
	name string
	q    string

	mu        sync.Mutex
	handled   map[int]int // accepts per sequence number
	confirmed map[int]bool
	published int
	lastAt    atomic.Int64 // UnixNano of the last accept
	blocked   atomic.Int64 // publishes that failed with ErrBlocked
	unavail   atomic.Int64 // publishes that failed with ErrUnavailable
	recoverMS int64
	// publishing is set while publish runs: a fault with nothing left to
	// publish or handle has nothing to recover.
	publishing atomic.Bool
	// failing gates the transient failures and rejections (on by default).
	failing atomic.Bool
	// errs counts what the publisher saw, by text with the queue name
	// taken out: what the fault looked like to the application.
	errs map[string]int
}

// localPort is a socket's local address in an error's text ("read tcp
// 127.0.0.1:39130->…"): one error counted once whatever the port.
var localPort = regexp.MustCompile(`[0-9.]+:[0-9]+->`)

func newProbe(t *testing.T, name, q string) *probe {
	p := &probe{t: t, name: name, q: q, handled: map[int]int{}, confirmed: map[int]bool{}, errs: map[string]int{}}
	p.failing.Store(true)
	return p
}

// transient: one message in ten fails its first attempt (a Retry).
func transient(seq int) bool { return seq%10 == 3 }

// rejected: with reject on, one in twenty is rejected to q.dlq.
func rejected(seq int) bool { return seq%20 == 7 }

// handler accepts each message, failing the transient ones once, and
// rejecting the rejected ones when reject is set.
func (p *probe) handler(reject bool) runtime.Route {
	return runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		seq, err := strconv.Atoi(m.Payload)
		if err != nil {
			return runtime.Park(fmt.Errorf("not a sequence number: %q", m.Payload))
		}
		if reject && rejected(seq) && p.failing.Load() {
			return runtime.Reject(errors.New("probe rejects it"))
		}
		if transient(seq) && m.Envelope.Attempt == 1 && p.failing.Load() {
			return runtime.Retry(errors.New("transient failure"))
		}
		p.accepted(seq)
		return runtime.Accept()
	})
}

func (p *probe) accepted(seq int) {
	p.mu.Lock()
	p.handled[seq]++
	p.mu.Unlock()
	p.lastAt.Store(time.Now().UnixNano())
}

// publish sends seqs [from, to) with workers goroutines, paced at one
// message per pace, each publish retried while it fails with
// ErrUnavailable (a window, not a state), until deadline. Any other error
// fails the test.
func (p *probe) publish(c *runtime.Connection, from, to, workers int, pace time.Duration, deadline time.Time) {
	p.publishing.Store(true)
	defer p.publishing.Store(false)
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq := int(next.Add(1) - 1)
				if seq >= to {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(seq-from) * pace)))
				p.mu.Lock()
				p.published++
				p.mu.Unlock()
				wait := 20 * time.Millisecond
				for time.Now().Before(deadline) {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					err := runtime.Publish(ctx, c, text, "", strconv.Itoa(seq), runtime.WithRoutingKey(p.q))
					cancel()
					if err == nil {
						p.mu.Lock()
						p.confirmed[seq] = true
						p.mu.Unlock()
						break
					}
					p.mu.Lock()
					p.errs[localPort.ReplaceAllString(strings.ReplaceAll(err.Error(), p.q, "<q>"), "<local>->")]++
					p.mu.Unlock()
					if errors.Is(err, runtime.ErrBlocked) {
						p.blocked.Add(1)
					}
					if errors.Is(err, runtime.ErrUnavailable) {
						p.unavail.Add(1)
					}
					if !errors.Is(err, runtime.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
						p.t.Errorf("publish %d: %v (want nil, or an error matching ErrUnavailable)", seq, err)
						break
					}
					time.Sleep(wait)
					wait = min(wait*2, 500*time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// markRecovery waits until a message is accepted after at, and keeps the
// longest such wait as recover_ms.
func (p *probe) markRecovery(at time.Time, within time.Duration) {
	deadline := at.Add(within)
	for time.Now().Before(deadline) {
		if last := p.lastAt.Load(); last > at.UnixNano() {
			ms := (last - at.UnixNano()) / 1e6
			p.mu.Lock()
			p.recoverMS = max(p.recoverMS, ms)
			p.mu.Unlock()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p.idle() {
		// Everything published had been handled before the fault: there
		// was nothing to handle after it, so nothing to measure.
		return
	}
	p.mu.Lock()
	p.recoverMS = max(p.recoverMS, within.Milliseconds())
	p.mu.Unlock()
	p.t.Errorf("%s: nothing was handled within %s of the fault", p.name, within)
}

// idle reports whether the publisher is done, every publish it started was
// confirmed, and every confirmed message was handled.
func (p *probe) idle() bool {
	if p.publishing.Load() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.published != len(p.confirmed) {
		return false
	}
	for seq := range p.confirmed {
		if p.handled[seq] == 0 {
			return false
		}
	}
	return true
}

// settle waits until every confirmed message is accounted for (handled,
// or in q.dlq/q.parked by depth), or until d.
func (p *probe) settle(d time.Duration, expectDLQ func(int) bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		missing := 0
		for seq := range p.confirmed {
			if p.handled[seq] == 0 && (expectDLQ == nil || !expectDLQ(seq)) {
				missing++
			}
		}
		p.mu.Unlock()
		if missing == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readQueue takes every message of queue (acking it) and returns their
// sequence numbers.
func readQueue(t *testing.T, queue string) []int {
	t.Helper()
	conn, err := amqp.Dial(URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			var ae *amqp.Error
			if errors.As(err, &ae) && ae.Code == amqp.NotFound {
				return out
			}
			t.Fatalf("get from %s: %v", queue, err)
		}
		if !ok {
			return out
		}
		if seq, err := strconv.Atoi(string(d.Body)); err == nil {
			out = append(out, seq)
		}
	}
}

type tally struct {
	published, confirmed, handled, dlq, parked, lost, duplicated int
	recoverMS                                                    int64
}

// report reads q.dlq and q.parked, counts, prints the fault line and
// checks that nothing confirmed was lost and duplicates stay within bound.
func (p *probe) report(dlqSeen []int, maxDup int) tally {
	p.t.Helper()
	dlq := append(readQueue(p.t, wire.DeadLetterQueue(p.q)), dlqSeen...)
	parked := readQueue(p.t, wire.ParkedQueue(p.q))
	p.mu.Lock()
	defer p.mu.Unlock()
	where := map[int]int{}
	for seq, n := range p.handled {
		where[seq] += n
	}
	for _, seq := range dlq {
		where[seq]++
	}
	for _, seq := range parked {
		where[seq]++
	}
	tl := tally{published: p.published, confirmed: len(p.confirmed), handled: len(p.handled), dlq: len(dlq), parked: len(parked), recoverMS: p.recoverMS}
	var lost []int
	for seq := range p.confirmed {
		if where[seq] == 0 {
			lost = append(lost, seq)
		}
	}
	for _, n := range where {
		if n > 1 {
			tl.duplicated += n - 1
		}
	}
	tl.lost = len(lost)
	line := fmt.Sprintf("fault=%s published=%d confirmed=%d handled=%d dlq=%d parked=%d lost=%d duplicated=%d recover_ms=%d",
		p.name, tl.published, tl.confirmed, tl.handled, tl.dlq, tl.parked, tl.lost, tl.duplicated, tl.recoverMS)
	fmt.Println(line)
	for text, n := range p.errs {
		fmt.Printf("  %s: publish error ×%d: %s\n", p.name, n, text)
	}
	if f := os.Getenv("ACEMQ_FAULTS_TABLE"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
	if tl.lost > 0 {
		sort.Ints(lost)
		if len(lost) > 20 {
			lost = lost[:20]
		}
		p.t.Errorf("%s: %d confirmed messages lost, first %v", p.name, tl.lost, lost)
	}
	if tl.duplicated > maxDup {
		p.t.Errorf("%s: %d duplicates, more than the bound %d", p.name, tl.duplicated, maxDup)
	}
	return tl
}

// dupBound is how many duplicates one fault may make for a consumer of
// the prefetch given with the default hold budget and ack slack, and
// publishes in flight publishers: each delivery unacked at the consumer
// and settled (the prefetch's, and the ack slack's, the prefetch up to
// 64: deliveries settled behind a copy waiting for its confirm, acked
// with it by one multiple ack), and each publish in flight, once more. A
// retry held in a hold budget slot is unsettled: its redelivery is not a
// duplicate.
func dupBound(prefetch, inFlight int) int {
	return prefetch + min(prefetch, 64) + inFlight
}

// consumerFor starts the probe's consumer on c.
func (p *probe) consumer(c *runtime.Connection, reject bool, policy runtime.RetryPolicy, concurrency, prefetch int) *runtime.Consumer {
	p.t.Helper()
	cs, err := runtime.Consume(ctxFor(p.t, 20*time.Second), c, runtime.ConsumerSpec{Queue: p.q, Routes: []runtime.Route{p.handler(reject)}},
		runtime.WithRetry(policy), runtime.WithConcurrency(concurrency), runtime.WithPrefetch(prefetch))
	if err != nil {
		p.t.Fatal(err)
	}
	return cs
}

func closeAll(t *testing.T, cs *runtime.Consumer, conns ...*runtime.Connection) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if cs != nil {
		if err := cs.Close(ctx); err != nil {
			t.Errorf("Consumer.Close: %v", err)
		}
	}
	for _, c := range conns {
		if err := c.Close(ctx); err != nil {
			t.Errorf("Connection.Close: %v", err)
		}
	}
}

// dialQuiet dials without the cleanup of dial: the test closes it and
// checks the goroutines after.
func dialQuiet(t *testing.T, url string, opts ...runtime.DialOption) *runtime.Connection {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts = append([]runtime.DialOption{runtime.WithLogger(quietLogger())}, opts...)
	c, err := runtime.Dial(ctx, url, opts...)
	if err != nil {
		t.Fatalf("runtime.Dial: %v", err)
	}
	return c
}

var probePolicy = runtime.Fixed(3, 200*time.Millisecond)

// Connections closed every 2s (through the management API) during 20,000
// messages with 10% transient failures.
func TestFaultConnectionsClosedEvery2s(t *testing.T) {
	const n = 20000
	q := queue(t, "kill2s", nil)
	leakCheck(t)
	origin := Name("kill2s")
	c := dialQuiet(t, URL(), runtime.WithOrigin(origin))
	pub := dialQuiet(t, URL(), runtime.WithOrigin(origin+"-pub"))
	p := newProbe(t, "connections-closed-every-2s", q)
	cs := p.consumer(c, false, probePolicy, 8, 50)

	stop := make(chan struct{})
	kills, closed := 0, 0
	var killer, recoveries sync.WaitGroup
	killer.Add(1)
	go func() {
		defer killer.Done()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			at := time.Now()
			// The management API lists a new connection a little late:
			// wait for one up to the next tick.
			k := KillConnections(t, origin+"*", 1900*time.Millisecond)
			if k > 0 {
				kills++
				closed += k
				recoveries.Add(1)
				go func() {
					defer recoveries.Done()
					p.markRecovery(at, 15*time.Second)
				}()
			}
		}
	}()
	p.publish(pub, 0, n, 8, 1500*time.Microsecond, time.Now().Add(3*time.Minute))
	// Kill only while messages are published: a round after the last
	// message was handled has nothing to recover to.
	close(stop)
	killer.Wait()
	p.settle(60*time.Second, nil)
	recoveries.Wait()
	// The management API lists a new connection 1.5-5s after it opens, so
	// a round finds the reconnected connections every 2-5s.
	if kills < 5 {
		t.Errorf("only %d rounds of kills happened during the run", kills)
	}
	fmt.Printf("  %s: %d rounds of kills closed %d connections\n", p.name, kills, closed)
	// At-least-once: a kill can return each unacked delivery (prefetch 50,
	// and the default ack slack's 50 settled behind a copy in flight) and
	// each publish in flight (8) once more. The hold budget's slots add no
	// duplicate: a held retry is unsettled, so its redelivery is not one.
	p.report(nil, (kills+1)*dupBound(50, 8))
	closeAll(t, cs, c, pub)
}

// stop_app for 6s mid-run, then start_app.
func TestFaultBrokerStopStart(t *testing.T) {
	const n = 3000
	q := queue(t, "stopstart", nil)
	leakCheck(t)
	c := dialQuiet(t, URL())
	pub := dialQuiet(t, URL())
	p := newProbe(t, "stop-app-start-app", q)
	cs := p.consumer(c, false, probePolicy, 4, 20)
	t.Cleanup(func() { _, _ = Ctl("start_app") })
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(1500 * time.Millisecond)
		MustCtl(t, "stop_app")
		time.Sleep(6 * time.Second)
		MustCtl(t, "start_app")
		at := time.Now() // the broker is back
		p.markRecovery(at, 20*time.Second)
	}()
	p.publish(pub, 0, n, 4, 4*time.Millisecond, time.Now().Add(2*time.Minute))
	<-done
	p.settle(60*time.Second, nil)
	p.report(nil, dupBound(20, 4)+n/10)
	closeAll(t, cs, c, pub)
}

// A memory alarm for 5s while publishing.
func TestFaultMemoryAlarmWhilePublishing(t *testing.T) {
	const n = 3000
	q := queue(t, "alarm", nil)
	leakCheck(t)
	c := dialQuiet(t, URL())
	pub := dialQuiet(t, URL())
	p := newProbe(t, "memory-alarm", q)
	cs := p.consumer(c, false, probePolicy, 4, 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Second)
		SetAlarm(t)
		time.Sleep(5 * time.Second)
		MustCtl(t, "set_vm_memory_high_watermark", "0.4")
		at := time.Now() // the broker has lifted the alarm
		p.markRecovery(at, 30*time.Second)
		ClearAlarm(t)
	}()
	p.publish(pub, 0, n, 4, 4*time.Millisecond, time.Now().Add(2*time.Minute))
	<-done
	p.settle(60*time.Second, nil)
	p.report(nil, 2*dupBound(20, 4))
	if p.blocked.Load() == 0 {
		t.Error("no publish failed with ErrBlocked during the alarm")
	}
	closeAll(t, cs, c, pub)
}

// q.dlq and a rung deleted under a running consumer, which from then on
// rejects one message in twenty and retries one in ten through the broker
// (rung q.retry.1s): its copies find no queue. The operator declares the
// topology again 3s later. The queues are deleted while empty and before
// the failures start, so that a deletion racing a copy in flight (the
// operator destroying a message, not the library losing it) cannot count
// as lost.
func TestFaultDLQAndRungDeleted(t *testing.T) {
	const n = 2000
	policy := runtime.Fixed(3, time.Second).WithWaitInBrokerFrom(time.Second)
	top := func(tp *runtime.Topology, q string) {
		tp.Queue(runtime.Queue{Name: q, Retry: policy})
	}
	q := queue(t, "dlqdel", top)
	leakCheck(t)
	c := dialQuiet(t, URL())
	pub := dialQuiet(t, URL())
	p := newProbe(t, "dlq-and-rung-deleted", q)
	p.failing.Store(false)
	cs := p.consumer(c, true, policy, 4, 20)
	var dlqSeen []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(1500 * time.Millisecond)
		_, ch := raw(t)
		dlqSeen = append(dlqSeen, readQueue(t, wire.DeadLetterQueue(q))...)
		deleteEmpty(t, wire.DeadLetterQueue(q), &dlqSeen)
		deleteEmpty(t, wire.RungQueue(q, time.Second), nil)
		_ = ch
		p.failing.Store(true)
		at := time.Now()
		time.Sleep(3 * time.Second)
		tc := dialQuiet(t, URL())
		tp := runtime.NewTopology()
		top(tp, q)
		if err := tc.Declare(ctxFor(t, 20*time.Second), tp); err != nil {
			t.Errorf("declare again: %v", err)
		}
		closeAll(t, nil, tc)
		p.markRecovery(at, 20*time.Second)
	}()
	p.publish(pub, 0, n, 4, 4*time.Millisecond, time.Now().Add(2*time.Minute))
	<-done
	p.settle(90*time.Second, func(seq int) bool { return rejected(seq) && p.handled[seq] == 0 })
	time.Sleep(2 * time.Second)
	p.report(dlqSeen, dupBound(20, 4))
	closeAll(t, cs, c, pub)
}

// deleteEmpty deletes queue once it is empty (if-empty), reading what is
// in it into seen between tries.
func deleteEmpty(t *testing.T, queue string, seen *[]int) {
	t.Helper()
	conn, err := amqp.Dial(URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDelete(queue, false, true, false); err == nil {
			ch.Close()
			return
		}
		if seen != nil {
			*seen = append(*seen, readQueue(t, queue)...)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("could not delete %s while empty within 20s", queue)
}

// A proxy that stalls every connection silently: with a 1s heartbeat the
// client notices within two heartbeats and recovers through a fresh
// connection.
func TestFaultProxyStall(t *testing.T) {
	testProxy(t, "proxy-stall", func(px *Proxy) int { return px.Stall() }, 2*time.Second+2500*time.Millisecond)
}

// A proxy that cuts every connection.
func TestFaultProxyCut(t *testing.T) {
	testProxy(t, "proxy-cut", func(px *Proxy) int { return px.Cut() }, 3*time.Second)
}

func testProxy(t *testing.T, name string, fault func(*Proxy) int, within time.Duration) {
	const n = 3000
	q := queue(t, name, nil)
	leakCheck(t)
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	u := "amqp://guest:guest@" + px.Addr() + "/"
	c := dialQuiet(t, u, runtime.WithHeartbeat(time.Second))
	pub := dialQuiet(t, u, runtime.WithHeartbeat(time.Second))
	p := newProbe(t, name, q)
	cs := p.consumer(c, false, probePolicy, 4, 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			time.Sleep(2 * time.Second)
			at := time.Now()
			if fault(px) == 0 {
				t.Errorf("%s: no connection through the proxy", name)
			}
			p.markRecovery(at, 20*time.Second)
		}
	}()
	p.publish(pub, 0, n, 4, 4*time.Millisecond, time.Now().Add(2*time.Minute))
	<-done
	p.settle(60*time.Second, nil)
	tl := p.report(nil, 3*dupBound(20, 4))
	if time.Duration(tl.recoverMS)*time.Millisecond > within {
		t.Errorf("%s: recovery took %dms, want within %s", name, tl.recoverMS, within)
	}
	closeAll(t, cs, c, pub)
	px.Close()
}
