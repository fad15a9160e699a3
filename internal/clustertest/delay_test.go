//go:build cluster

package clustertest

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
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

// TestDelayNodeStopped is issue 40's proof on the cluster: 1,000 messages
// with random delays of 1–30 s through quorum levels (replicated over the
// three nodes, at-least-once between levels), the node leading level 04
// stopped 14 s after the first publish (when the messages of 16–30 s
// leave that level) and started again 15 s later. Every message arrives,
// not early, no later than the node was down (the quorum queues it led
// elect a new leader meanwhile), and a second copy now and then at most
// (at-least-once: the levels' hops and the consumer's unsettled
// deliveries); the line gives the lateness against each message's due
// time (its publish plus its delay rounded up to whole seconds):
//
//	fault=delay-node-stopped levels=quorum messages=N lost=0 duplicated=0 redelivered=0 late_p50_ms=… late_p99_ms=… max_late_ms=… over_1s=…
func TestDelayNodeStopped(t *testing.T) {
	requireCluster(t)
	const n = 1000
	const maxDelay = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b := make([]byte, 4)
	_, _ = crand.Read(b)
	q := "test.cluster.delay." + hex.EncodeToString(b)
	ex, prefix := q+".ex", q+wire.DelayPrefixSuffix
	stopped := ""
	t.Cleanup(func() {
		if stopped != "" {
			cluster(t, "start-node", stopped)
		}
		deleteQueues(t, q)
		deleteExchanges(t, prefix, ex)
	})

	pc := dial(t, ctx, "acemq-cluster-delay-publisher")
	cc := dial(t, ctx, "acemq-cluster-delay-consumer")
	top := &runtime.Topology{
		Exchanges:   []runtime.Exchange{{Name: ex, Kind: amqp.ExchangeDirect}},
		Queues:      []runtime.Queue{{Name: q, Type: runtime.Quorum, DeadLetter: true}},
		Bindings:    []runtime.Binding{{Queue: q, Exchange: ex, RoutingKey: "due"}},
		Delay:       runtime.Quorum,
		DelayPrefix: prefix,
	}
	// The publisher publishes into the delay topology it declared.
	if err := pc.Declare(ctx, top); err != nil {
		t.Fatalf("declare: %v", err)
	}
	level4 := wire.DelayLevel(prefix, 4)
	waitAllOnline(t, level4)
	waitAllOnline(t, q)

	var mu sync.Mutex
	type arrival struct {
		at          time.Time
		redelivered bool
	}
	got := make(map[int][]arrival, n)
	var handled atomic.Int64
	h := func(_ context.Context, m *runtime.Message[string]) runtime.Ack {
		at := time.Now()
		i, err := strconv.Atoi(m.Payload)
		if err != nil {
			t.Errorf("a delivery %q that was not published", m.Payload)
			return runtime.Accept()
		}
		mu.Lock()
		got[i] = append(got[i], arrival{at, m.Redelivered})
		mu.Unlock()
		handled.Add(1)
		return runtime.Accept()
	}
	consumer, err := runtime.Consume(ctx, cc, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(text, h)}},
		runtime.WithoutDeclare(), runtime.WithConcurrency(4))
	if err != nil {
		t.Fatalf("consume: %v", err)
	}

	rng := rand.New(rand.NewPCG(40, n))
	delays := make([]time.Duration, n)
	dues := make([]time.Time, n)
	for i := range delays {
		delays[i] = time.Second + time.Duration(rng.Int64N(int64(maxDelay-time.Second)+1)).Truncate(time.Millisecond)
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
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
				pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				err := runtime.Publish(pctx, pc, text, ex, strconv.Itoa(i), runtime.WithRoutingKey("due"), runtime.WithDelay(delays[i]))
				cancel()
				if err != nil {
					errs <- fmt.Errorf("publish %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	published := time.Since(start)

	time.Sleep(time.Until(start.Add(14 * time.Second)))
	stopped = leaderOf(t, level4)
	t.Logf("stopping %s, the leader of %s (%d messages in it)", stopped, level4, queueOf(t, level4).Messages)
	stopAt := time.Now()
	cluster(t, "stop-node", stopped)
	time.Sleep(time.Until(stopAt.Add(15 * time.Second)))
	cluster(t, "start-node", stopped)
	stopped = ""
	backAt := time.Now()

	deadline := start.Add(published + maxDelay + 2*time.Minute)
	for handled.Load() < n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := consumer.Close(cctx); err != nil {
		t.Logf("consumer close: %v", err)
	}
	ccancel()

	mu.Lock()
	defer mu.Unlock()
	var lost, dup, redelivered, over int
	var late []time.Duration
	for i := range n {
		as := got[i]
		if len(as) == 0 {
			lost++
			continue
		}
		dup += len(as) - 1
		for _, a := range as[1:] {
			if a.redelivered {
				redelivered++
			}
		}
		d := as[0].at.Sub(dues[i])
		if d < -50*time.Millisecond {
			t.Errorf("message %d arrived %s before its due time", i, -d)
		}
		if d > time.Second {
			over++
		}
		late = append(late, d)
	}
	slices.Sort(late)
	q50, q99, worst := quantile(late, 0.5), quantile(late, 0.99), quantile(late, 1)
	line := fmt.Sprintf("fault=delay-node-stopped levels=quorum messages=%d lost=%d duplicated=%d redelivered=%d late_p50_ms=%d late_p99_ms=%d max_late_ms=%d over_1s=%d stopped_ms=%d",
		n, lost, dup, redelivered, q50.Milliseconds(), q99.Milliseconds(), worst.Milliseconds(), over, backAt.Sub(stopAt).Milliseconds())
	fmt.Println(line)
	t.Log(line)
	if lost > 0 {
		t.Errorf("%d of %d messages never arrived", lost, n)
	}
	// Quorum levels are at-least-once: a hop whose confirm was lost with
	// the stopped node is done again by the level's new leader, and a
	// delivery the consumer had not settled when its node stopped comes
	// again marked redelivered. Measured: 0 to 3 second copies a run of
	// 1,000 (docs/delayed-delivery.md); an inbox absorbs them.
	if dup > n/100 {
		t.Errorf("%d second copies (%d redelivered), more than 1%% of %d", dup, redelivered, n)
	}
	if worst > backAt.Sub(stopAt)+time.Second {
		t.Errorf("a message arrived %s after its due time, more than the node was down (%s) + 1s", worst, backAt.Sub(stopAt))
	}
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := min(max(int(q*float64(len(sorted))+0.5)-1, 0), len(sorted)-1)
	return sorted[i]
}

// deleteExchanges deletes a delay test's levels (exchanges and queues),
// its delivery exchange and its destination.
func deleteExchanges(t *testing.T, prefix, ex string) {
	for _, nd := range nodes {
		conn, err := amqp.Dial(nd.amqp)
		if err != nil {
			continue
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
		_ = ch.ExchangeDelete(ex, false, false)
		return
	}
	t.Logf("no node answers to delete %s.*", strings.TrimSuffix(prefix, "."))
}
