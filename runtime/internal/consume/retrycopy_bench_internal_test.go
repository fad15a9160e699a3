package consume

// BenchmarkRetryCopy is the runtime's own cost of one retried delivery, as
// R1's failing side pays it (bench/NOTES.md, "A retried delivery's
// cost"): the retry decided (policy, hold budget full, spill), its copy
// built (headers rebuilt), written to the rung and confirmed by the broker,
// the outcome counted and the original's ack queued. The decode and the
// handler are not in it (the consume path's), nor the ack's write (the
// session's batch is made never to flush). A broker is needed for the
// confirm; the client's instructions and allocations do not depend on its
// speed:
//
//	go test -run '^$' -bench RetryCopy -benchmem ./runtime/internal/consume/
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind ./consume.test -test.run '^$' -test.bench RetryCopy -test.benchtime 2000x
//
// Since the engine left package runtime (issue 38) the copy goes to the
// publisher directly (testConn), without package runtime's publish
// bookkeeping around it (its span, the exchange check, the publish metric).

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/internal/core"
)

// retryCopyDelivery is a delivery back from q's 1 s rung on its second
// attempt, with the headers the runtime and the broker gave it. Its
// headers and body are shared (a copy only reads them); its message id is
// its own, as R1's are (the publisher holds a copy behind one in flight
// with the same id and key).
func retryCopyDelivery(q string, n int) func(tag uint64) amqp.Delivery {
	rung := q + ".retry.1s"
	h := amqp.Table{
		wire.HeaderID: "id-1", wire.HeaderAttempt: int64(2), wire.HeaderFirstSeen: "2026-12-03T06:00:00.123Z",
		wire.HeaderOrigin: "svc@host", wire.HeaderError: "bench: this message fails its first two attempts",
		"x-death": []any{amqp.Table{
			"count": int64(1), "exchange": "", "queue": rung, "reason": "expired",
			"routing-keys": []any{rung}, "time": time.Now(),
		}},
		"x-first-death-exchange": "", "x-first-death-queue": rung, "x-first-death-reason": "expired",
		"x-last-death-exchange": "", "x-last-death-queue": rung, "x-last-death-reason": "expired",
	}
	body := make([]byte, 716)
	ids := make([]string, n+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%08d", i)
	}
	return func(tag uint64) amqp.Delivery {
		return amqp.Delivery{Headers: h, ContentType: wire.ContentTypeText, MessageId: ids[tag], Type: "acemq.bench.retry",
			RoutingKey: q, DeliveryTag: tag, Body: body}
	}
}

func BenchmarkRetryCopy(b *testing.B) {
	brokertest.Require(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := brokertest.Queue(b, "bench.retrycopy")
	tc := newTestConn()
	// The socket is corked, as package runtime's dial corks it, so that
	// the publisher's writes are batched as they are in a Connection.
	var cork *amqpx.CorkConn
	conn, err := amqp.DialConfig(brokertest.URL(), amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		nc, err := net.DialTimeout(network, addr, 30*time.Second)
		if err != nil {
			return nil, err
		}
		cork = &amqpx.CorkConn{Conn: nc}
		return cork, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	rung := wire.RungQueue(q, time.Second)
	for _, d := range []struct {
		name string
		args amqp.Table
	}{{q, nil}, {rung, amqp.Table{wire.ArgMessageTTL: int64(1000), wire.ArgDeadLetterExchange: "", wire.ArgDeadLetterRoutingKey: q}}} {
		if _, err := ch.QueueDeclare(d.name, true, false, false, false, d.args); err != nil {
			b.Fatal(err)
		}
	}
	pch, err := conn.Channel()
	if err != nil {
		b.Fatal(err)
	}
	if tc.pub, err = amqpx.NewPublisher(ctx, func() string { return "" }, pch, cork); err != nil {
		b.Fatal(err)
	}
	tc.pub.FrameMax = amqpx.FrameMaxOf(conn) // as a Connection sets it
	policy := core.Fixed(3, 500*time.Millisecond)
	cfg := testConfig(Config{Prefetch: 256, Concurrency: 1, MaxBody: core.DefaultMaxBodySize}, tc)
	cs, err := newConsumer(ConsumerSpec{Queue: q, Retry: &policy, Routes: []core.Route{core.Handle(testTextType("acemq.bench.retry"), func(context.Context, *core.Message[string]) core.Ack { return core.Accept() })}}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	cs.handlerCtx = context.Background()
	s := &session{acks: newAckBatch(cfg), log: cs.log}
	s.acks.size, s.acks.delay = 1<<30, time.Hour // the acks are not written
	next := retryCopyDelivery(q, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d := next(uint64(i + 1))
		s.take(d.DeliveryTag)
		dv := &delivery{cs: cs, s: s, d: d, env: core.Envelope{ID: d.MessageId, Attempt: 2, FirstSeen: time.Now()}, ctx: context.Background()}
		dv.retry("bench: this message fails its first two attempts")
	}
	for {
		s.mu.Lock()
		n := len(s.acks.ready)
		s.mu.Unlock()
		if n == b.N {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	if n := cs.copies.wait(ctx); n > 0 {
		b.Fatalf("%d copies not settled", n)
	}
}
