package ui

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// benchMessages is how many dead letters BenchmarkConsole reads:
// $ACEMQ_UI_BENCH_MESSAGES, else 2000 (make bench-smoke runs it once).
// The figure is for 100000:
//
//	ACEMQ_UI_BENCH_MESSAGES=100000 go test -run '^$' -bench BenchmarkConsole -benchtime 1x ./cmd/acemq/internal/ui
func benchMessages() int {
	if n, err := strconv.Atoi(os.Getenv("ACEMQ_UI_BENCH_MESSAGES")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// fillDeadLetters puts n dead letters of 40 reasons (each with its own
// order id, so 40 groups once folded) on queue, as a consumer would have.
func fillDeadLetters(b *testing.B, queue, own string, n int) {
	b.Helper()
	_, ch := brokertest.Raw(b)
	must(b, ch.Confirm(false))
	const batch = 2000
	for i := 0; i < n; {
		var dcs []*amqp.DeferredConfirmation
		for j := 0; j < batch && i < n; j, i = j+1, i+1 {
			id := fmt.Sprintf("B-%07d", i)
			body := fmt.Sprintf(`{"order_id":%q,"quantity":%d,"customer":"customer-%d","note":"a body of about two hundred bytes, as an order's would be, with some words in it to search"}`, id, i%9+1, i%500)
			dc, err := ch.PublishWithDeferredConfirm("", queue, true, false, amqp.Publishing{MessageId: id, Type: "order.placed.v1",
				ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(body),
				Headers: amqp.Table{wire.HeaderID: id, wire.HeaderQueue: own, wire.HeaderAttempt: int64(5), wire.HeaderOrigin: "shop@bench",
					wire.HeaderFirstSeen: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z"),
					wire.HeaderError:     fmt.Sprintf("gave up after 5 attempts: order %s: step %s failed", id, string([]byte{'a' + byte(i%40/20), 'a' + byte(i%20)}))}})
			must(b, err)
			dcs = append(dcs, dc)
		}
		for _, dc := range dcs {
			if !dc.Wait() {
				b.Fatal("nacked")
			}
		}
	}
}

// BenchmarkConsole measures the console over benchMessages dead letters:
// the time from the start of the pass to the first groups the page can
// show (through the API, as the page asks), the whole pass's rate, the
// heap's peak during it, and a replay of every message's rate.
func BenchmarkConsole(b *testing.B) {
	n := benchMessages()
	s := newShop(b)
	s.stopConsumer()
	dlq := s.orders + ".dlq"
	for range b.N {
		b.StopTimer()
		fillDeadLetters(b, dlq, s.orders, n)
		s.serve(true)
		c := s.client()
		goruntime.GC()
		var peak atomic.Uint64
		stop := make(chan struct{})
		go func() {
			var ms goruntime.MemStats
			for {
				goruntime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		b.StartTimer()
		start := time.Now()
		x := s.srv.rescan()
		var first time.Duration
		for tries := 1; first == 0; {
			_, out, _ := c.do("GET", "/api/groups?by=reason", nil)
			if gs, _ := out["groups"].([]any); len(gs) > 0 {
				first = time.Since(start)
				break
			}
			// A pass that ended with no groups never gets any: say why
			// (each source's depth and error) and pass again, at most
			// three times, rather than wait for ever (it hung the
			// benchmarks' smoke run once, under load).
			x.mu.RLock()
			running, why := x.running, fmt.Sprintf("%s %+v", x.err, x.sources)
			x.mu.RUnlock()
			if !running {
				if tries == 3 {
					b.Fatalf("three passes ended with no group: %s", why)
				}
				b.Logf("a pass ended with no group (%s); passing again", why)
				tries++
				x = s.srv.rescan()
			}
			time.Sleep(10 * time.Millisecond)
		}
		for {
			x.mu.RLock()
			running, read := x.running, x.read
			x.mu.RUnlock()
			if !running {
				if read != n {
					b.Fatalf("the pass read %d of %d", read, n)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		pass := time.Since(start)
		close(stop)
		groups, _, _ := x.Groups(ByReason, Filter{}, "", 0)
		if len(groups) != 40 {
			b.Fatalf("%d groups, want 40", len(groups))
		}
		b.ReportMetric(first.Seconds(), "s-first-groups")
		b.ReportMetric(pass.Seconds(), "s-pass")
		b.ReportMetric(float64(n)/pass.Seconds(), "msg/s-pass")
		b.ReportMetric(float64(peak.Load())/(1<<20), "MB-peak-heap")

		// Replay every message (each group in turn would be the same
		// moves; the whole queue is the group "queue").
		c.signIn(testToken)
		start = time.Now()
		_, out, _ := c.do("POST", "/api/replay", map[string]any{"selection": map[string]any{"filter": map[string]any{"by": "queue", "group": dlq}}})
		job := c.waitJobFor(out["job"].(string), 10*time.Minute)
		took := time.Since(start)
		if job["moved"] != float64(n) {
			b.Fatalf("replay: %v", job)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "msg/s-replay")
		b.StopTimer()
		s.cancel()
		_ = s.srv.Close()
		purge(b, s.orders)
		b.StartTimer()
	}
}

func purge(b *testing.B, q string) {
	_, ch := brokertest.Raw(b)
	_, _ = ch.QueuePurge(q, false)
}

var _ = context.Background
