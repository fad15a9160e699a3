package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// deadLetter is a raw dead letter as the consumer writes one: body, id,
// attempt, error and the queue it came from.
func deadLetter(id, body, from string, attempt int64, why string) amqp.Publishing {
	m := textMessage(body, amqp.Table{
		wire.HeaderID:        id,
		wire.HeaderAttempt:   attempt,
		wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z",
		wire.HeaderOrigin:    "replay-test@host",
		wire.HeaderError:     why,
		wire.HeaderQueue:     from,
	})
	m.MessageId = id
	return m
}

// fill publishes n dead letters to queue through one confirm channel,
// pipelined, and returns their ids in order.
func fill(tb testing.TB, queue, from string, n int) []string {
	tb.Helper()
	ch := openChannel(tb)
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		tb.Fatalf("confirm: %v", err)
	}
	ids := make([]string, n)
	var waits []*amqp.DeferredConfirmation
	for i := range n {
		ids[i] = fmt.Sprintf("id-%06d", i)
		dc, err := ch.PublishWithDeferredConfirm("", queue, true, false,
			deadLetter(ids[i], fmt.Sprintf("body %d", i), from, 4, "gave up after 4 attempts: the warehouse is not answering"))
		if err != nil {
			tb.Fatalf("publish: %v", err)
		}
		waits = append(waits, dc)
	}
	for _, w := range waits {
		if !w.Wait() {
			tb.Fatal("nacked")
		}
	}
	return ids
}

// idsOn takes every message of queue (auto-ack) and returns their ids.
func idsOn(tb testing.TB, queue string) []string {
	tb.Helper()
	n := depth(tb, queue)
	if n <= 0 {
		return nil
	}
	var ids []string
	for _, d := range drain(tb, queue, n, time.Minute) {
		ids = append(ids, headerString(tb, d, wire.HeaderID))
	}
	return ids
}

// A replay with no routing key sends each message to its own queue: the
// library's dead letters by x-acemq-queue, the broker's own by x-death.
func TestReplayToEachOwnQueue(t *testing.T) {
	c := dial(t)
	base := brokertest.Queue(t, "replay-own")
	a, b, broker, dlq := base+".a", base+".b", base+".c", base+".dlq"
	for _, q := range []string{a, b, dlq} {
		rawQueue(t, q, nil)
	}
	// broker: the broker dead-letters a rejected message into dlq itself.
	rawQueue(t, broker, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
	rawPublish(t, dlq, deadLetter("to-a", "A", a, 3, "rejected by the handler: boom"))
	rawPublish(t, dlq, deadLetter("to-b", "B", b, 1, "parked by the handler: later"))
	rawPublish(t, broker, textMessage("C", amqp.Table{wire.HeaderID: "to-c"}))
	ch := rawChannel(t)
	d, ok, err := ch.Get(broker, false)
	if err != nil || !ok {
		t.Fatalf("get from %s: %v %v", broker, ok, err)
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	waitDepth(t, dlq, 3, wait)

	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Queues: []string{a, b, broker}})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if res.String() != "moved 3, skipped 0 (drained)" || res.Moved != 3 || res.Skipped != 0 || res.Failed != 0 || res.Stop != runtime.ReplayDrained {
		t.Fatalf("result %q %+v, want moved 3, skipped 0 (drained)", res, res)
	}
	for q, id := range map[string]string{a: "to-a", b: "to-b", broker: "to-c"} {
		m := getOne(t, q, wait)
		if got := headerString(t, m, wire.HeaderID); got != id {
			t.Errorf("%s holds %s, want %s", q, got, id)
		}
		for k := range m.Headers {
			if k == "x-death" || len(k) > 14 && k[:14] == "x-first-death-" {
				t.Errorf("%s: the replayed copy keeps %s: %v", id, k, m.Headers)
			}
		}
	}
	if n := depth(t, dlq); n != 0 {
		t.Errorf("%s still holds %d", dlq, n)
	}
}

// The copy keeps the identity and the body byte for byte, restarts the
// attempt, clears the error and carries the replay stamps.
func TestReplayKeepsIdentityAndStamps(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-id")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	body := []byte{0xff, 0x00, 'o', 'k', 0xc3}
	ts := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := amqp.Publishing{
		ContentType: "application/vnd.apache.avro+binary", Type: "order.placed.v2",
		CorrelationId: "corr-1", MessageId: "msg-1", Timestamp: ts, DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{
			wire.HeaderID: "id-1", wire.HeaderAttempt: int64(4), wire.HeaderFirstSeen: "2026-11-30T09:00:00.123Z",
			wire.HeaderOrigin: "shop@host", wire.HeaderError: "gave up after 4 attempts: down", wire.HeaderQueue: q,
			wire.HeaderReplayCount: int64(2), "tenant": "acme",
		},
		Body: body,
	}
	rawPublish(t, dlq, m)
	before := time.Now().UTC().Add(-time.Second)
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{})
	if err != nil || res.Moved != 1 {
		t.Fatalf("Replay: %v %v", res, err)
	}
	got := getOne(t, q, wait)
	if !bytes.Equal(got.Body, body) {
		t.Errorf("body %x, want %x", got.Body, body)
	}
	if got.ContentType != m.ContentType || got.Type != m.Type || got.CorrelationId != "corr-1" || got.MessageId != "msg-1" || !got.Timestamp.Equal(ts) || got.DeliveryMode != amqp.Persistent {
		t.Errorf("properties changed: %+v", got)
	}
	for k, want := range map[string]string{wire.HeaderID: "id-1", wire.HeaderFirstSeen: "2026-11-30T09:00:00.123Z",
		wire.HeaderOrigin: "shop@host", "tenant": "acme", wire.HeaderReplayedFrom: dlq} {
		if v := headerString(t, got, k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if v := got.Headers[wire.HeaderAttempt]; v != int64(1) {
		t.Errorf("attempt %v (%T), want 1", v, v)
	}
	if v, ok := got.Headers[wire.HeaderError]; ok {
		t.Errorf("error kept: %v", v)
	}
	if v, ok := got.Headers[wire.HeaderQueue]; ok {
		t.Errorf("x-acemq-queue kept on a message that is no longer a dead letter: %v", v)
	}
	if v := got.Headers[wire.HeaderReplayCount]; v != int64(3) {
		t.Errorf("replay count %v (%T), want 3", v, v)
	}
	at, err := time.Parse(time.RFC3339, headerString(t, got, wire.HeaderReplayedAt))
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("replayed-at %q (%v), want about now", got.Headers[wire.HeaderReplayedAt], err)
	}
}

// KeepAttempts puts back the attempt and the error exactly as they were.
func TestReplayKeepAttempts(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-keep")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	rawPublish(t, dlq, deadLetter("k-1", "x", q, 4, "gave up after 4 attempts: down"))
	forged := deadLetter("k-2", "y", q, 0, "rejected by the handler: no")
	forged.Headers[wire.HeaderAttempt] = "garbled"
	rawPublish(t, dlq, forged)
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{KeepAttempts: true})
	if err != nil || res.Moved != 2 {
		t.Fatalf("Replay: %v %v", res, err)
	}
	for _, want := range []struct {
		attempt any
		why     string
	}{{int64(4), "gave up after 4 attempts: down"}, {"garbled", "rejected by the handler: no"}} {
		got := getOne(t, q, wait)
		if got.Headers[wire.HeaderAttempt] != want.attempt || headerString(t, got, wire.HeaderError) != want.why {
			t.Errorf("attempt %v error %q, want %v %q", got.Headers[wire.HeaderAttempt], got.Headers[wire.HeaderError], want.attempt, want.why)
		}
		if got.Headers[wire.HeaderReplayCount] != int64(1) {
			t.Errorf("replay count %v, want 1", got.Headers[wire.HeaderReplayCount])
		}
	}
}

// A queue onto itself is refused before anything is read: the message is
// still there, never delivered.
func TestReplayRefusesItsOwnSource(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-loop")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, dlq, nil)
	rawPublish(t, dlq, deadLetter("l-1", "x", dlq, 1, "boom"))
	_, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{RoutingKey: dlq})
	if !errors.Is(err, runtime.ErrReplayLoop) {
		t.Fatalf("err %v, want ErrReplayLoop", err)
	}
	if m := getOne(t, dlq, wait); m.Redelivered {
		t.Errorf("the message was touched (redelivered)")
	}
	// A message whose own queue is the source stays, counted as failed.
	rawPublish(t, dlq, deadLetter("l-2", "x", dlq, 1, "boom"))
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{})
	if err != nil || res.Failed != 1 || res.Moved != 0 || !errors.Is(res.Failures[0], runtime.ErrReplayLoop) {
		t.Fatalf("Replay: %v %+v, %v", res, res.Failures, err)
	}
	waitDepth(t, dlq, 1, wait)
}

// A filtered pass of 3 moves 2 and skips 1, which stays on the source.
func TestReplayFilter(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-filter")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	rawPublish(t, dlq, deadLetter("f-1", "A-1", q, 4, "gave up after 4 attempts: the warehouse is not answering"))
	rawPublish(t, dlq, deadLetter("f-2", "A-2", q, 1, "rejected by the handler: no customer id"))
	rawPublish(t, dlq, deadLetter("f-3", "A-3", q, 4, "gave up after 4 attempts: the warehouse is not answering"))
	var seen []string
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{RoutingKey: q,
		Filter: func(e runtime.Envelope, _ map[string]any, body []byte) bool {
			seen = append(seen, e.ID+"="+string(body))
			return bytes.Contains([]byte(e.Error), []byte("warehouse"))
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.String() != "moved 2, skipped 1 (drained)" {
		t.Fatalf("result %q, want moved 2, skipped 1 (drained)", res)
	}
	if !slices.Equal(seen, []string{"f-1=A-1", "f-2=A-2", "f-3=A-3"}) {
		t.Errorf("filter saw %v: each message once, in order", seen)
	}
	if got := idsOn(t, q); !slices.Equal(got, []string{"f-1", "f-3"}) {
		t.Errorf("target holds %v", got)
	}
	left := getOne(t, dlq, wait)
	if headerString(t, left, wire.HeaderID) != "f-2" || headerString(t, left, wire.HeaderError) != "rejected by the handler: no customer id" {
		t.Errorf("left on the source: %v", left.Headers)
	}
}

// A consumer that rejects every replayed message again sends it back to
// the source while the pass is still running: the pass declines it rather
// than moving it a second time.
func TestReplayNeverMovesTwiceInOnePass(t *testing.T) {
	defer runtime.SetReplayBatch(5)()
	c := dial(t)
	q := brokertest.Queue(t, "replay-twice")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	const n = 40
	ids := fill(t, dlq, q, n)
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(errors.New("no customer id")) })
	var filtered atomic.Int32
	res, err := c.Replay(ctxFor(t, time.Minute), dlq, runtime.ReplayOptions{
		Filter: func(runtime.Envelope, map[string]any, []byte) bool {
			// Slow enough that the first batches come back mid-pass.
			filtered.Add(1)
			time.Sleep(40 * time.Millisecond)
			return true
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != n || res.Stop != runtime.ReplayDrained {
		t.Fatalf("result %v, want %d moved (drained)", res, n)
	}
	if res.Skipped == 0 {
		t.Fatalf("result %v: no message came back within the pass; the test proves nothing", res)
	}
	if int(filtered.Load()) != n {
		t.Errorf("the filter saw %d messages, want %d (the ones that came back are declined before it)", filtered.Load(), n)
	}
	rec.waitN(t, n, wait)
	waitDepth(t, dlq, n, wait)
	time.Sleep(200 * time.Millisecond)
	if rec.len() != n {
		t.Errorf("the handler saw %d deliveries, want %d: a message moved twice", rec.len(), n)
	}
	got := idsOn(t, dlq)
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("dlq holds %d ids, want the %d, each once", len(got), n)
	}
}

// Limit and ctx's deadline end a pass; what was not moved stays.
func TestReplayLimitAndDeadline(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-bounds")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	fill(t, dlq, q, 5)
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Limit: 2})
	if err != nil || res.String() != "moved 2, skipped 0 (limit)" {
		t.Fatalf("limit: %q %v", res, err)
	}
	waitDepth(t, dlq, 3, wait)
	pass, cancel := context.WithTimeout(ctxFor(t, wait), 300*time.Millisecond)
	defer cancel()
	res, err = c.Replay(pass, dlq, runtime.ReplayOptions{
		Filter: func(runtime.Envelope, map[string]any, []byte) bool { time.Sleep(200 * time.Millisecond); return true },
	})
	if err != nil || res.Stop != runtime.ReplayDeadline || res.Moved == 0 || res.Moved >= 3 {
		t.Fatalf("deadline: %q %v", res, err)
	}
	waitDepth(t, q, 2+res.Moved, wait)
	waitDepth(t, dlq, 3-res.Moved, wait)
}

// A copy that cannot be published leaves the message where it was, and the
// pass reports it; so does a message with nowhere to go.
func TestReplayFailuresStay(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-fail")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	rawPublish(t, dlq, deadLetter("ok", "x", q, 1, "boom"))
	rawPublish(t, dlq, deadLetter("gone", "y", q+".missing", 1, "boom"))
	rawPublish(t, dlq, textMessage("z", amqp.Table{wire.HeaderID: "nowhere"}))
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Queues: []string{q + ".missing"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.String() != "moved 1, skipped 0, failed 2 (drained)" || len(res.Failures) != 2 {
		t.Fatalf("result %q %+v", res, res.Failures)
	}
	if f := res.Failures[0]; f.ID != "nowhere" || f.Target != "" {
		t.Errorf("first failure %v, want the message with no target", f)
	}
	if f := res.Failures[1]; f.ID != "gone" || f.Target != q+".missing" || !errors.Is(f, runtime.ErrUnroutable) {
		t.Errorf("second failure %v, want unroutable to the missing queue", f)
	}
	if got := idsOn(t, dlq); !slices.Equal(got, []string{"gone", "nowhere"}) {
		t.Errorf("source holds %v, want the two failures in their order", got)
	}
}

// An exchange given routes each copy by the routing key; a missing
// exchange or source is an error before anything is read.
func TestReplayThroughExchange(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-ex")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	ex := rawExchange(t, amqp.ExchangeDirect)
	if err := rawChannel(t).QueueBind(q, "order.placed", ex, false, nil); err != nil {
		t.Fatal(err)
	}
	rawPublish(t, dlq, deadLetter("e-1", "x", "elsewhere", 1, "boom"))
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Exchange: ex, RoutingKey: "order.placed"})
	if err != nil || res.Moved != 1 {
		t.Fatalf("Replay: %v %v", res, err)
	}
	if got := idsOn(t, q); !slices.Equal(got, []string{"e-1"}) {
		t.Errorf("%s holds %v", q, got)
	}
	if _, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Exchange: ex + ".missing", RoutingKey: "k"}); !errors.Is(err, runtime.ErrExchangeNotFound) {
		t.Errorf("missing exchange: %v", err)
	}
	if _, err := c.Replay(ctxFor(t, wait), q+".nothing", runtime.ReplayOptions{RoutingKey: q}); !errors.Is(err, runtime.ErrQueueNotFound) {
		t.Errorf("missing source: %v", err)
	}
}

// 10,000 dead letters all reach the target, none left behind, none twice.
func TestReplayTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	c := dial(t)
	q := brokertest.Queue(t, "replay-10k")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	const n = 10_000
	ids := fill(t, dlq, q, n)
	res, err := c.Replay(ctxFor(t, 3*time.Minute), dlq, runtime.ReplayOptions{RoutingKey: q})
	if err != nil || res.String() != "moved 10000, skipped 0 (drained)" {
		t.Fatalf("Replay: %q %v", res, err)
	}
	waitDepth(t, dlq, 0, wait)
	waitDepth(t, q, n, wait)
	got := idsOn(t, q)
	if !slices.Equal(got, ids) {
		t.Errorf("target holds %d messages; want the %d in their order, each once", len(got), n)
	}
}

// A pass cancelled half way leaves every message on exactly one of the
// two queues: the batch in flight is finished, nothing is doubled.
func TestReplayCancelledHalfWay(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-cancel")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	const n = 2000
	ids := fill(t, dlq, q, n)
	ctx, cancel := context.WithCancel(ctxFor(t, time.Minute))
	var once sync.Once
	seen := 0
	res, err := c.Replay(ctx, dlq, runtime.ReplayOptions{Filter: func(runtime.Envelope, map[string]any, []byte) bool {
		if seen++; seen == n/2 {
			once.Do(cancel)
		}
		return true
	}})
	if err != nil || res.Stop != runtime.ReplayCancelled || res.Moved == 0 || res.Moved >= n {
		t.Fatalf("Replay: %q %v", res, err)
	}
	waitDepth(t, q, res.Moved, wait)
	waitDepth(t, dlq, n-res.Moved, wait)
	got := append(idsOn(t, q), idsOn(t, dlq)...)
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("the two queues hold %d messages; want the %d, each once", len(got), n)
	}
}

// Filter sees every header: a pass can pick messages by an application
// header.
func TestReplayFilterOnHeader(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-match")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	for i, tenant := range []string{"acme", "other", "acme"} {
		m := deadLetter(fmt.Sprintf("m-%d", i), "x", q, 1, "boom")
		m.Headers["tenant"] = tenant
		rawPublish(t, dlq, m)
	}
	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{
		Filter: func(e runtime.Envelope, h map[string]any, _ []byte) bool {
			return e.ID != "m-2" && h["tenant"] == "acme"
		},
	})
	if err != nil || res.String() != "moved 1, skipped 2 (drained)" {
		t.Fatalf("Replay: %q %v", res, err)
	}
	if got := idsOn(t, q); !slices.Equal(got, []string{"m-0"}) {
		t.Errorf("target holds %v", got)
	}
}
