package runtime_test

// AMQP short strings (issue 36, item 1): every shortstr a publish writes
// (exchange, routing key, the properties, header names at every level)
// holds at most 255 bytes, and amqp091-go answers a longer one by closing
// the whole connection (501), every channel on it with it: a consumer
// sharing the connection lost its channel, and the message its handler
// was working on was handled again. The shared test broker has no
// management plugin to make a vhost with, so each test uses queues of its
// own and a connection of its own.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// sharedConsumer is a consumer on c of queue work whose handler holds the
// first message ("job") until release is closed, and counts every call by
// body.
type sharedConsumer struct {
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	calls   map[string]int
	cs      *runtime.Consumer
}

func startSharedConsumer(t *testing.T, c *runtime.Connection, work string) *sharedConsumer {
	t.Helper()
	sc := &sharedConsumer{started: make(chan struct{}), release: make(chan struct{}), calls: map[string]int{}}
	var once sync.Once
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		sc.mu.Lock()
		sc.calls[m.Payload]++
		sc.mu.Unlock()
		if m.Payload == "job" {
			once.Do(func() { close(sc.started) })
			select {
			case <-sc.release:
			case <-ctx.Done():
			}
		}
		return runtime.Accept()
	}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: work,
		Routes: []runtime.Route{runtime.Handle(textType, h)}}, runtime.WithoutDeclare())
	if err != nil {
		t.Fatalf("Consume %s: %v", work, err)
	}
	sc.cs = cs
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cs.Close(ctx)
	})
	return sc
}

func (sc *sharedConsumer) count(body string) int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.calls[body]
}

// long is a string of n bytes.
func long(n int) string { return strings.Repeat("k", n) }

// TestOverlongShortStringsKeepTheConnection: a routing key, a correlation
// id, an exchange, a type and header names of 256 bytes (at the top, in a
// nested table, in an array's table) are each refused before anything is
// written, with ErrInvalidMessage naming the field and its length; the
// connection is never lost, so a consumer sharing it keeps its channel and
// handles the message it holds once; 255 bytes go out.
func TestOverlongShortStringsKeepTheConnection(t *testing.T) {
	t.Parallel()
	work, dest := acemqtest.Queue(t, "shortstr-work"), acemqtest.Queue(t, "shortstr-dest")
	rawQueue(t, work, nil)
	rawQueue(t, dest, nil)
	c := dial(t)
	sc := startSharedConsumer(t, c, work)
	rawPublish(t, work, textMessage("job", nil))
	select {
	case <-sc.started:
	case <-time.After(wait):
		t.Fatal("the consumer did not start on its message")
	}
	live := c.AMQPForTest()
	ch, _ := sc.cs.SessionForTest()

	longType := runtime.NewTextType(long(256))
	cases := []struct {
		field string
		send  func(ctx context.Context) error
	}{
		{"routing key", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, "", "x", runtime.WithRoutingKey(long(256)))
		}},
		{"correlation id", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, "", "x", runtime.WithRoutingKey(dest), runtime.WithCorrelationID(long(256)))
		}},
		{"header name", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, "", "x", runtime.WithRoutingKey(dest), runtime.WithHeaders(map[string]any{long(256): "v"}))
		}},
		{"header name", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, "", "x", runtime.WithRoutingKey(dest),
				runtime.WithHeaders(map[string]any{"outer": amqp.Table{"inner": amqp.Table{long(256): int32(1)}}}))
		}},
		{"header name", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, "", "x", runtime.WithRoutingKey(dest),
				runtime.WithHeaders(map[string]any{"list": []any{"a", amqp.Table{long(256): true}}}))
		}},
		{"exchange", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, textType, long(256), "x", runtime.WithRoutingKey(dest))
		}},
		{"type", func(ctx context.Context) error {
			return runtime.Publish(ctx, c, longType, "", "x", runtime.WithRoutingKey(dest))
		}},
		{"routing key", func(ctx context.Context) error {
			p, err := runtime.PublishAsync(ctx, c, textType, "", "x", runtime.WithRoutingKey(long(256)))
			if err != nil {
				return err
			}
			return p.Wait(ctx)
		}},
	}
	for i, tc := range cases {
		err := tc.send(ctxFor(t, 10*time.Second))
		if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "256 bytes") {
			t.Errorf("case %d: %v, want ErrInvalidMessage naming the %s and its 256 bytes", i, err, tc.field)
		}
		// A publish that goes out (a confirm's round trip) lets amqp091-go's
		// shutdown of a connection it failed to write on run first.
		publishText(t, c, dest, "probe")
		if live.(*amqp.Connection).IsClosed() || c.AMQPForTest() != live {
			t.Fatalf("case %d (%s): the connection was lost", i, tc.field)
		}
		if now, _ := sc.cs.SessionForTest(); now != ch || ch.(*amqp.Channel).IsClosed() {
			t.Fatalf("case %d (%s): the consumer sharing the connection lost its channel", i, tc.field)
		}
	}
	for range cases {
		if got := getOne(t, dest, wait); string(got.Body) != "probe" {
			t.Fatalf("%s holds %q, want the probes", dest, got.Body)
		}
	}
	// 255 bytes is a short string.
	if err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, "", "ok", runtime.WithRoutingKey(dest),
		runtime.WithCorrelationID(long(255)), runtime.WithHeaders(map[string]any{long(255): "v"})); err != nil {
		t.Fatalf("255-byte correlation id and header name: %v", err)
	}
	close(sc.release)
	rawPublish(t, work, textMessage("after", nil))
	deadline := time.Now().Add(wait)
	for sc.count("after") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := sc.count("job"); n != 1 {
		t.Errorf("the held message was handled %d times, want 1", n)
	}
	if now := c.AMQPForTest(); now != live {
		t.Errorf("the connection was lost and dialled again")
	}
	if got := getOne(t, dest, wait); string(got.Body) != "ok" {
		t.Errorf("%s holds %q", dest, got.Body)
	}
}

// FuzzPublishShortStrings publishes with fuzzed options and headers (a
// routing key, a correlation id, an exchange, a header name at the top, in
// a nested table and in an array's table, a header value of any of the
// types a header may hold) on one connection that a consumer shares, and
// checks after every try that the connection and the consumer's channel
// are still open: a value the runtime cannot write is refused
// (ErrInvalidMessage when it is a short string longer than 255 bytes),
// never written.
func FuzzPublishShortStrings(f *testing.F) {
	f.Add("", "", "h", "n", "", uint8(0), 0, 0)
	f.Add("rk", "cid", "h", "n", "", uint8(1), 0, 0)
	f.Add("", "", "h", "n", "", uint8(2), 256, 0)
	f.Add("", "", "h", "n", "", uint8(3), 0, 256)
	f.Add("", "", "h", "n", "", uint8(4), 255, 255)
	f.Add("", "", "", "", "", uint8(5), 1000, 300)
	f.Add("\x00", "\xff\xfe", "\x00", "\xff", "", uint8(6), 256, 0)
	f.Add("", "", "h", "n", "amq.direct", uint8(7), 0, 0)
	f.Add("", "", "h", "n", "", uint8(8), 0, 0)
	f.Add("", "", "h", "n", "", uint8(9), 0, 0)
	f.Add("", "", "h", "n", "", uint8(10), 0, 0)
	c := dial(f)
	work, dest := acemqtest.Queue(f, "shortstr-fuzz-work"), acemqtest.Queue(f, "shortstr-fuzz-dest")
	rawQueue(f, work, nil)
	rawQueue(f, dest, amqp.Table{"x-max-length": int32(1)})
	var handled atomic.Int64
	h := func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
		handled.Add(1)
		return runtime.Accept()
	}
	cs, err := runtime.Consume(ctxFor(f, 10*time.Second), c, runtime.ConsumerSpec{Queue: work,
		Routes: []runtime.Route{runtime.Handle(textType, h)}}, runtime.WithoutDeclare())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = cs.Close(context.Background()) })
	publishText(f, c, work, "warm-up")
	deadline := time.Now().Add(wait)
	for handled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	live := c.AMQPForTest().(*amqp.Connection)
	chAny, _ := cs.SessionForTest()
	ch := chAny.(*amqp.Channel)
	values := []any{nil, true, byte(7), int8(-1), int16(-2), int32(-3), int64(-4), int(5), uint16(6), uint32(7),
		float32(1.5), 2.5, "s\x00\xff", []byte("\xff\xfesig\x80"), amqp.Decimal{Scale: 2, Value: 314},
		time.Unix(1700000000, 0), amqp.Table{"k": "v"}, []any{"a", int32(1)},
		uint64(8), map[string]any{"m": 1}, struct{}{}}
	f.Fuzz(func(t *testing.T, rk, cid, hname, nested, exchange string, kind uint8, pad1, pad2 int) {
		pad := func(s string, n int) string {
			if n <= 0 {
				return s
			}
			return s + strings.Repeat("p", min(n, 1<<12))
		}
		rk, cid = pad(rk, pad1), pad(cid, pad2)
		headers := map[string]any{
			pad(hname, pad2): values[int(kind)%len(values)],
			"nested":         amqp.Table{pad(nested, pad1): int32(1)},
			"list":           []any{amqp.Table{pad(nested, pad2): values[int(kind/3)%len(values)]}},
		}
		opts := []runtime.PublishOption{runtime.WithoutMandatory(), runtime.WithHeaders(headers)}
		if rk != "" {
			opts = append(opts, runtime.WithRoutingKey(rk))
		}
		if cid != "" {
			opts = append(opts, runtime.WithCorrelationID(cid))
		}
		err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, exchange, "fuzz", opts...)
		overlong := len(rk) > 255 || len(cid) > 255 || len(exchange) > 255 || len(pad(hname, pad2)) > 255 ||
			len(pad(nested, pad1)) > 255 || len(pad(nested, pad2)) > 255
		if overlong && !errors.Is(err, runtime.ErrInvalidMessage) {
			t.Errorf("a short string over 255 bytes: Publish = %v, want ErrInvalidMessage", err)
		}
		// A publish that goes out lets amqp091-go's shutdown of a
		// connection it failed to write on run first.
		if err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, "", "probe", runtime.WithRoutingKey(dest)); err != nil {
			t.Errorf("the probe after the try: %v", err)
		}
		if live.IsClosed() || c.AMQPForTest() != live {
			t.Fatalf("the connection was lost (Publish = %v)", err)
		}
		if now, _ := cs.SessionForTest(); now != chAny || ch.IsClosed() {
			t.Fatalf("the consumer sharing the connection lost its channel (Publish = %v)", err)
		}
	})
}

// TestCopyOfAForgedLongIDKeepsTheConnection: a delivery without a message
// id whose x-acemq-id is forged 300 bytes long is retried and dead-lettered
// by the runtime's own copies, which never write it as their message id
// (a short string): the connection is kept, the id stays in its header.
func TestCopyOfAForgedLongIDKeepsTheConnection(t *testing.T) {
	t.Parallel()
	q := acemqtest.Queue(t, "shortstr-copy")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(2, 50*time.Millisecond)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("always fails"))
	})
	live := c.AMQPForTest().(*amqp.Connection)
	forged := long(300)
	rawPublish(t, q, textMessage("forged", amqp.Table{wire.HeaderID: forged}))
	d := getOne(t, q+".dlq", 30*time.Second)
	if got, _ := d.Headers[wire.HeaderID].(string); got != forged {
		t.Errorf("the dead letter's x-acemq-id is %d bytes, want the forged 300", len(got))
	}
	if len(d.MessageId) > 255 {
		t.Errorf("the dead letter's message id is %d bytes", len(d.MessageId))
	}
	if n := rec.len(); n != 2 {
		t.Errorf("handled %d times, want 2 (the policy's attempts): %s", n, describe(rec.all()))
	}
	if live.IsClosed() || c.AMQPForTest() != live {
		t.Errorf("the connection was lost")
	}
}

// TestReplayToAForgedLongQueueKeepsTheConnection: a dead letter whose
// forged x-acemq-queue names a queue of 300 bytes, replayed following its
// headers, is left on its queue as failed, with ErrInvalidMessage naming
// the routing key; the connection is kept and the next message moves.
func TestReplayToAForgedLongQueueKeepsTheConnection(t *testing.T) {
	t.Parallel()
	q := acemqtest.Queue(t, "shortstr-replay")
	rawQueue(t, q, nil)
	dlq := q + ".dlq"
	rawQueue(t, dlq, nil)
	rawPublish(t, dlq, textMessage("forged", amqp.Table{wire.HeaderID: "forged-1", wire.HeaderQueue: long(300)}))
	rawPublish(t, dlq, textMessage("good", amqp.Table{wire.HeaderID: "good-1", wire.HeaderQueue: q}))
	c := dial(t)
	live := c.AMQPForTest().(*amqp.Connection)
	res, err := c.Replay(ctxFor(t, 20*time.Second), dlq, runtime.ReplayOptions{FollowHeaders: true})
	if err != nil {
		t.Fatalf("Replay: %v (%+v)", err, res)
	}
	if res.Moved != 1 || res.Failed != 1 || len(res.Failures) != 1 ||
		!errors.Is(res.Failures[0].Err, runtime.ErrInvalidMessage) || !strings.Contains(res.Failures[0].Err.Error(), "the routing key is 300 bytes") {
		t.Fatalf("Replay = %+v (%v), want the good one moved and the forged one failed with ErrInvalidMessage naming the routing key", res, res.Failures)
	}
	if got := getOne(t, q, wait); string(got.Body) != "good" {
		t.Errorf("%s holds %q", q, got.Body)
	}
	if got := getOne(t, dlq, wait); string(got.Body) != "forged" {
		t.Errorf("%s holds %q, want the forged message left", dlq, got.Body)
	}
	if live.IsClosed() || c.AMQPForTest() != live {
		t.Errorf("the connection was lost")
	}
}

// TestOverlongQueueNamesAreRefusedBeforeDeclaring: a queue whose rung
// (q.retry.1s) would be 256 bytes long, a binding's 256-byte routing key
// and a consumer of such a queue are refused before anything is
// declared, naming the name and its length; the connection is kept.
func TestOverlongQueueNamesAreRefusedBeforeDeclaring(t *testing.T) {
	t.Parallel()
	c := dial(t)
	publishText(t, c, "", "warm-up", runtime.WithoutMandatory()) // a live connection to watch
	live := c.AMQPForTest().(*amqp.Connection)
	q := acemqtest.Name("") + long(247-len(acemqtest.Name(""))) // its parked queue 254 bytes, its rung 256
	retry := ptr(runtime.Fixed(2, time.Second))
	cases := []struct {
		says string
		try  func(ctx context.Context) error
	}{
		{`with ".retry.1s" is 256 bytes`, func(ctx context.Context) error {
			return c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: *retry}))
		}},
		{"routing key \"kkkk", func(ctx context.Context) error {
			return c.Declare(ctx, &runtime.Topology{Bindings: []runtime.Binding{{Queue: "q", Exchange: "amq.direct", RoutingKey: long(256)}}})
		}},
		{`with ".retry.1s" is 256 bytes`, func(ctx context.Context) error {
			_, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Retry: retry,
				Routes: []runtime.Route{runtime.Handle(textType, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}})
			return err
		}},
		{"the queue name is 256 bytes", func(ctx context.Context) error {
			_, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: long(256),
				Routes: []runtime.Route{runtime.Handle(textType, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}})
			return err
		}},
	}
	for i, tc := range cases {
		err := tc.try(ctxFor(t, 10*time.Second))
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "above AMQP's 255 for a short string") {
			t.Errorf("case %d: %v, want an error saying %q", i, err, tc.says)
		}
		publishText(t, c, "", "probe", runtime.WithoutMandatory())
		if live.IsClosed() || c.AMQPForTest() != live {
			t.Fatalf("case %d: the connection was lost", i)
		}
	}
}
