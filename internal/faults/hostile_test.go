//go:build faults

package faults

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Hostile header tables (issue 19, items 1 and 2), one fault line each:
//
//	fault=<shape> published=N confirmed=N handled=N dlq=N parked=N lost=N duplicated=N handler_calls=N connection_losses=N left_on_queue=N
//
// Each shape is one hostile message published raw ahead of 20 good ones,
// while the application publishes 20 more through the consuming
// connection. handled counts accepted messages, handler_calls every call,
// connection_losses the consumer's lost sessions.

type hostileShape struct {
	name    string
	headers amqp.Table
	typ     string // the hostile message's AMQP type ("" is text's)
	reject  bool   // its handler rejects it
	where   string // where it must end: parked, dlq, or queue (left for the operator)
}

func deepHeaders(n int) amqp.Table {
	t := amqp.Table{"leaf": "x"}
	for range n - 1 {
		t = amqp.Table{"n": t}
	}
	return amqp.Table{"deep": t, wire.HeaderID: "hostile"}
}

func wideHeaders(n int) amqp.Table {
	t := amqp.Table{wire.HeaderID: "hostile"}
	for i := range n {
		t[fmt.Sprintf("w%05d", i)] = ""
	}
	return t
}

func TestHostileShapes(t *testing.T) {
	Require(t)
	for _, sh := range []hostileShape{
		{name: "header-depth-40", headers: deepHeaders(40), where: "parked"},
		{name: "header-width-8193", headers: wideHeaders(8193), where: "parked"},
		{name: "header-size-near-frame-max-reject", headers: amqp.Table{"padding": strings.Repeat("p", 130_400)}, reject: true, where: "dlq"},
		{name: "header-size-near-frame-max-undecodable", headers: amqp.Table{"padding": strings.Repeat("p", 130_950)}, typ: "no.such.type", where: "parked"},
	} {
		t.Run(sh.name, func(t *testing.T) { runShape(t, sh, dialCounted(t, URL(), nil)) })
	}
	t.Run("header-depth-40-amqps", func(t *testing.T) {
		// Under amqps the header filter cannot read the frames: the
		// consumer's connection dies, the consumer moves to one of its
		// own and backs off; the message stays for the operator.
		secretUserOnNode(t)
		ca := newCA(t, "acemq faults hostile CA")
		ca.installOnNode(t)
		cfg := &tls.Config{RootCAs: ca.pool(), Certificates: []tls.Certificate{ca.clientCert}}
		runShape(t, hostileShape{name: "header-depth-40-amqps", headers: deepHeaders(40), where: "queue"}, dialCounted(t, tlsURL, cfg))
	})
}

// counted is a connection and the lost sessions its consumers logged.
type counted struct {
	c      *runtime.Connection
	losses *atomic.Int64
}

type lossCounter struct {
	slog.Handler
	n *atomic.Int64
}

func (h lossCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h lossCounter) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "acemq: consumer lost its channel") {
		h.n.Add(1)
	}
	return nil
}

func (h lossCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lossCounter) WithGroup(string) slog.Handler      { return h }

func dialCounted(t *testing.T, u string, cfg *tls.Config) counted {
	t.Helper()
	n := &atomic.Int64{}
	opts := []runtime.DialOption{runtime.WithLogger(slog.New(lossCounter{n: n}))}
	if cfg != nil {
		opts = append(opts, runtime.WithTLS(cfg))
	}
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), u, opts...)
	if err != nil {
		t.Fatalf("dial %s: %v", strings.SplitN(u, "@", 2)[1], err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return counted{c, n}
}

// shapeRun is what one shape's run saw.
type shapeRun struct {
	mu        sync.Mutex
	calls     map[string]int
	accepted  map[string]int
	published int
	confirmed map[string]bool
}

func runShape(t *testing.T, sh hostileShape, cc counted) {
	q := queue(t, "hostile", nil)
	good := q
	if sh.where == "queue" {
		// Its head is the hostile message for good: the others go to a
		// queue of their own, consumed on the same connection.
		good = queue(t, "hostile-good", nil)
	}
	r := &shapeRun{calls: map[string]int{}, accepted: map[string]int{}, confirmed: map[string]bool{}}
	_, ch := raw(t)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	rawSend := func(queue, body string, h amqp.Table, typ string) {
		r.published++
		if typ == "" {
			typ = text.Name()
		}
		dc, err := ch.PublishWithDeferredConfirm("", queue, true, false, amqp.Publishing{Headers: h, Type: typ, ContentType: "text/plain", DeliveryMode: amqp.Persistent, Body: []byte(body)})
		if err == nil && dc.Wait() {
			r.confirmed[body] = true
		}
	}
	rawSend(q, "hostile", sh.headers, sh.typ)
	for i := range 20 {
		rawSend(good, fmt.Sprint("raw-", i), nil, "")
	}
	var closers []*runtime.Consumer
	for _, name := range uniq(q, good) {
		cs, err := runtime.Consume(ctxFor(t, 20*time.Second), cc.c, runtime.ConsumerSpec{Queue: name, Routes: []runtime.Route{
			runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
				return r.handled(m.Payload, sh.reject)
			}),
		}})
		if err != nil {
			t.Fatal(err)
		}
		closers = append(closers, cs)
	}
	for i := range 20 {
		body := fmt.Sprint("app-", i)
		r.published++
		if err := runtime.Publish(ctxFor(t, 10*time.Second), cc.c, text, "", body, runtime.WithRoutingKey(good)); err == nil {
			r.mu.Lock()
			r.confirmed[body] = true
			r.mu.Unlock()
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.await(t, sh, q)
	for _, cs := range closers {
		_ = cs.Close(ctxFor(t, 10*time.Second))
	}
	r.report(t, sh, q, good, cc.losses.Load())
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func (r *shapeRun) handled(body string, reject bool) runtime.Ack {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[body]++
	if reject && body == "hostile" {
		return runtime.Reject(fmt.Errorf("refused"))
	}
	r.accepted[body]++
	return runtime.Accept()
}

// await waits for the 40 good messages to be handled and the hostile one
// to reach its place.
func (r *shapeRun) await(t *testing.T, sh hostileShape, q string) {
	t.Helper()
	place := map[string]string{"parked": wire.ParkedQueue(q), "dlq": wire.DeadLetterQueue(q), "queue": q}[sh.where]
	deadline := time.Now().Add(60 * time.Second)
	for {
		r.mu.Lock()
		good := 0
		for b := range r.accepted {
			if b != "hostile" {
				good++
			}
		}
		r.mu.Unlock()
		n := ready(t, place)
		if good >= 40 && (n == 1 || sh.where == "queue") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 60s, %d of 40 good messages handled, %s holds %d", sh.name, good, place, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// report reads q.dlq, q.parked and what is left on the queues, prints the
// fault line and checks it.
func (r *shapeRun) report(t *testing.T, sh hostileShape, q, good string, losses int64) {
	t.Helper()
	dlq := readParked(t, wire.DeadLetterQueue(q))
	parked := readParked(t, wire.ParkedQueue(q))
	left := ready(t, q)
	for i := 0; sh.where == "queue" && left == 0 && i < 50; i++ {
		time.Sleep(100 * time.Millisecond) // the closed consumer's delivery coming back
		left = ready(t, q)
	}
	if good != q {
		left += ready(t, good)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	where := map[string]int{}
	calls := 0
	for b, n := range r.accepted {
		where[b] += n
	}
	for _, n := range r.calls {
		calls += n
	}
	for _, m := range append(append([]parkedMsg(nil), dlq...), parked...) {
		where[m.body]++
	}
	if sh.where == "queue" && left > 0 {
		where["hostile"]++
	}
	lost, dup := 0, 0
	for b := range r.confirmed {
		if where[b] == 0 {
			lost++
		}
	}
	for _, n := range where {
		dup += max(n-1, 0)
	}
	fmt.Printf("fault=%s published=%d confirmed=%d handled=%d dlq=%d parked=%d lost=%d duplicated=%d handler_calls=%d connection_losses=%d left_on_queue=%d\n",
		sh.name, r.published, len(r.confirmed), len(r.accepted), len(dlq), len(parked), lost, dup, calls, losses, left)
	if lost > 0 {
		t.Errorf("%s: %d confirmed messages lost", sh.name, lost)
	}
	if n := r.calls["hostile"]; n > 1 || n == 1 && !sh.reject {
		t.Errorf("%s: the hostile message's handler was called %d times", sh.name, n)
	}
	if sh.where != "queue" && losses > 0 {
		t.Errorf("%s: the consumer lost its connection %d times", sh.name, losses)
	}
	if sh.where == "queue" && (losses < 1 || losses > 8) {
		t.Errorf("%s: %d connection losses, want a few (backed off)", sh.name, losses)
	}
	var reasons []string
	for _, m := range append(dlq, parked...) {
		reasons = append(reasons, m.reason)
	}
	t.Logf("%s: reasons %q", sh.name, reasons)
}

// ready is how many messages queue holds ready, asked of the broker (the
// management API's figures lag by seconds).
func ready(t *testing.T, queue string) int {
	t.Helper()
	_, ch := raw(t)
	qi, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("passive declare %s: %v", queue, err)
	}
	return qi.Messages
}
