//go:build faults

package faults

// Issue 19, item 4: every exported call that takes a ctx returns by its
// deadline when the broker stops reading, with ctx's error wrapped.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// stallCtx is the ctx every call gets; stallMargin what it may take past
// that deadline. The runtime's own overshoot is a few milliseconds (the
// figures in docs/reliability.md); the margin is for a loaded 2-core
// machine under the race detector. Before the fix the calls returned after
// about 12s (three of the connection's 4s heartbeats).
const (
	stallCtx    = time.Second
	stallMargin = 500 * time.Millisecond
	stallBeat   = 4 * time.Second
)

// stallCase is one call behind a proxy that stops passing what the client
// sends: at the nth frame of method at counted from the call's start
// (at zero: at once).
type stallCase struct {
	name string
	at   Method
	nth  int
	// says is what the error names (at's name when empty).
	says string
	// prepare runs before the stall (on the proxied connection c, with
	// q a queue of the case's own) and returns the call.
	prepare func(t *testing.T, c *runtime.Connection, q string) func(ctx context.Context) error
}

// A broker that stops reading (the proxy passes nothing more from the
// client, heartbeats included; the broker's bytes still arrive) makes no
// call wait past its ctx: each returns within stallMargin of its 1s
// deadline, with an error matching context.DeadlineExceeded that names the
// round trip it gave up on. One case per call and per round trip in it,
// each on a connection and a proxy of its own; they are prepared one by
// one, then called all at once (the lane's time: one deadline, not 34).
func TestCallsReturnByTheirDeadlineWhenTheBrokerStopsReading(t *testing.T) {
	leakCheck(t)
	direct := dial(t)
	ex := Name("ctx-ex")
	if err := direct.Declare(ctxFor(t, 20*time.Second), runtime.NewTopology().Exchange(ex, amqp.ExchangeDirect)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteExchange(ex) })
	fill := func(t *testing.T, q string, n int) {
		for i := range n {
			publish(t, direct, q, fmt.Sprintf("m-%d", i))
		}
	}
	cases := stallCases(ex, fill)
	runs := make([]*stallRun, len(cases))
	for i, tc := range cases {
		runs[i] = prepareStall(t, direct, tc)
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(r.call)
	}
	wg.Wait()
	for _, r := range runs {
		wg.Go(r.close)
	}
	wg.Wait()
	var worst time.Duration
	for _, r := range runs {
		t.Run(r.tc.name, r.check)
		worst = max(worst, r.took-stallCtx)
	}
	t.Logf("%d calls, worst return %s after the deadline", len(runs), worst.Round(time.Millisecond))
	fmt.Printf("fault=broker-stops-reading calls=%d ctx_ms=%d worst_over_ms=%d\n", len(runs), stallCtx.Milliseconds(), worst.Milliseconds())
}

// stallRun is one stallCase: its proxy, its connection and what the call
// returned.
type stallRun struct {
	tc   stallCase
	px   *Proxy
	c    *runtime.Connection
	fn   func(context.Context) error
	err  error
	took time.Duration
	hit  <-chan struct{} // closed once the proxy stopped at tc.at
}

// prepareStall gives tc a queue, a proxy and a connection through it,
// and runs its prepare.
func prepareStall(t *testing.T, direct *runtime.Connection, tc stallCase) *stallRun {
	t.Helper()
	q := Name("ctx")
	if err := direct.Declare(ctxFor(t, 20*time.Second), runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueues(q) })
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	r := &stallRun{tc: tc, px: px}
	t.Cleanup(px.Close)
	r.c = dialQuiet(t, "amqp://guest:guest@"+px.Addr()+"/", runtime.WithHeartbeat(stallBeat))
	r.fn = tc.prepare(t, r.c, q)
	return r
}

// call stops the proxy (at once, or armed at tc.at) and makes the call
// with a 1s ctx.
func (r *stallRun) call() {
	if r.tc.at == (Method{}) {
		r.px.StallToBroker()
	} else {
		r.hit = r.px.StallToBrokerAt(r.tc.at, r.tc.nth)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stallCtx)
	defer cancel()
	start := time.Now()
	r.err = r.fn(ctx)
	r.took = time.Since(start)
}

// close cuts the proxy (what waits on the stalled connection ends now)
// and closes the connection.
func (r *stallRun) close() {
	r.px.Cut()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.c.Close(ctx)
}

func (r *stallRun) check(t *testing.T) {
	tc, err := r.tc, r.err
	if r.hit != nil {
		select {
		case <-r.hit:
		default:
			t.Fatalf("the call never sent %s (frame %d): it returned %v after %s", tc.at, tc.nth, err, r.took)
		}
	}
	if r.took > stallCtx+stallMargin {
		t.Errorf("returned %s after its %s ctx began (want within %s of the deadline): %v", r.took.Round(time.Millisecond), stallCtx, stallMargin, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one matching context.DeadlineExceeded", err)
	}
	if says := cmp.Or(tc.says, tc.at.String()); tc.at != (Method{}) && !strings.Contains(err.Error(), says) {
		t.Errorf("err %q does not name what it gave up on (%q)", err, says)
	}
	t.Logf("returned in %s: %v", r.took.Round(time.Millisecond), err)
}

func stallCases(ex string, fill func(*testing.T, string, int)) []stallCase {
	publishTo := func(exchange string) func(*testing.T, *runtime.Connection, string) func(context.Context) error {
		return func(_ *testing.T, c *runtime.Connection, q string) func(context.Context) error {
			return func(ctx context.Context) error {
				return runtime.Publish(ctx, c, text, exchange, "x", runtime.WithRoutingKey(q))
			}
		}
	}
	warmPublish := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		publish(t, c, q, "warm")
		return publishTo("")(t, c, q)
	}
	messageCount := func(_ *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := c.MessageCount(ctx, q); return err }
	}
	browse := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		fill(t, q, 3)
		return func(ctx context.Context) error {
			_, err := c.Browse(ctx, q, 0, func(*runtime.Delivery) error { return nil })
			return err
		}
	}
	consume := func(_ *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		return func(ctx context.Context) error {
			cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
				runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
			}})
			if err == nil {
				cs.Close(ctx)
				return errors.New("Consume returned a consumer behind a broker that does not read")
			}
			return err
		}
	}
	pull := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		fill(t, q, 1)
		return func(ctx context.Context) error {
			d, err := c.Pull(ctx, q)
			if d != nil {
				return errors.New("Pull returned a delivery behind a broker that does not read")
			}
			return err
		}
	}
	declare := func(_ *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		return func(ctx context.Context) error {
			return c.Declare(ctx, runtime.NewTopology().Exchange(ex, amqp.ExchangeDirect).Queue(runtime.Queue{Name: q}).Bind(q, ex, q))
		}
	}
	replay := func(filter func(runtime.Envelope, map[string]any, []byte) bool) func(*testing.T, *runtime.Connection, string) func(context.Context) error {
		return func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
			deadLetters(t, q, 2)
			return func(ctx context.Context) error {
				res, err := c.Replay(ctx, wire.DeadLetterQueue(q), runtime.ReplayOptions{Filter: filter})
				if err == nil {
					return fmt.Errorf("Replay returned %s and no error", res)
				}
				return err
			}
		}
	}
	declineAll := func(runtime.Envelope, map[string]any, []byte) bool { return false }
	closeConn := func(_ *testing.T, c *runtime.Connection, _ string) func(context.Context) error {
		return c.Close
	}
	closeConsumer := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
		}})
		if err != nil {
			t.Fatal(err)
		}
		return cs.Close
	}
	publishAsync := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		publish(t, c, q, "warm")
		return func(ctx context.Context) error {
			p, err := runtime.PublishAsync(ctx, c, text, "", "x", runtime.WithRoutingKey(q))
			if err != nil {
				return err
			}
			return p.Wait(ctx)
		}
	}
	publishBatch := func(t *testing.T, c *runtime.Connection, q string) func(context.Context) error {
		return func(ctx context.Context) error {
			return runtime.PublishBatch(ctx, c, text, "", []string{"a", "b"}, runtime.WithRoutingKey(q))
		}
	}
	return []stallCase{
		// The four calls of the issue, with everything stopped at once.
		{"publish-new-exchange", Method{}, 0, "", publishTo(ex)},
		{"message-count", Method{}, 0, "", messageCount},
		{"browse", Method{}, 0, "", browse},
		{"consume", Method{}, 0, "", consume},
		// Each round trip.
		{"publish-new-exchange/channel.open", ChannelOpen, 1, "", publishTo(ex)},
		{"publish-new-exchange/exchange.declare", ExchangeDeclare, 1, "", publishTo(ex)},
		{"publish/confirm.select", ConfirmSelect, 1, "", publishTo("")},
		{"publish/basic.publish", BasicPublish, 1, "the broker's confirm", warmPublish},
		{"publish-async/basic.publish", BasicPublish, 1, "the broker's confirm", publishAsync},
		{"publish-batch/confirm.select", ConfirmSelect, 1, "", publishBatch},
		{"message-count/channel.open", ChannelOpen, 1, "", messageCount},
		{"message-count/queue.declare", QueueDeclare, 1, "", messageCount},
		{"browse/channel.open", ChannelOpen, 1, "", browse},
		{"browse/queue.declare", QueueDeclare, 1, "", browse},
		{"browse/basic.consume", BasicConsume, 1, "", browse},
		{"browse/basic.cancel", BasicCancel, 1, "", browse},
		{"browse/wait-returned/queue.declare", QueueDeclare, 2, "", browse},
		{"consume/channel.open", ChannelOpen, 1, "", consume},
		{"consume/basic.qos", BasicQos, 1, "", consume},
		{"consume/queue.declare", QueueDeclare, 1, "", consume},
		{"consume/basic.consume", BasicConsume, 1, "", consume},
		{"pull/channel.open", ChannelOpen, 1, "", pull},
		{"pull/basic.get", BasicGet, 1, "", pull},
		{"declare/channel.open", ChannelOpen, 1, "", declare},
		{"declare/exchange.declare", ExchangeDeclare, 1, "", declare},
		{"declare/queue.declare", QueueDeclare, 2, "", declare},
		{"declare/queue.bind", QueueBind, 1, "", declare},
		{"replay/queue.declare", QueueDeclare, 1, "", replay(nil)},
		{"replay/basic.get", BasicGet, 1, "", replay(nil)},
		{"replay/basic.publish", BasicPublish, 1, "did not confirm 2 copies", replay(nil)},
		{"replay/wait-returned/queue.declare", QueueDeclare, 2, "", replay(declineAll)},
		{"connection-close/connection.close", ConnectionClose, 1, "", closeConn},
		{"consumer-close/basic.cancel", BasicCancel, 1, "", closeConsumer},
		{"consumer-close/channel.close", ChannelClose, 1, "", closeConsumer},
	}
}

// deadLetters puts n dead letters of q on q.dlq, each naming q as its own
// queue.
func deadLetters(t *testing.T, q string, n int) {
	t.Helper()
	_, ch := raw(t)
	for i := range n {
		if err := ch.Publish("", wire.DeadLetterQueue(q), false, false, amqp.Publishing{
			MessageId: fmt.Sprintf("dl-%d", i), Type: "acemq.faults.v1", ContentType: "text/plain", Body: []byte("dead"),
			Headers: amqp.Table{wire.HeaderID: fmt.Sprintf("dl-%d", i), wire.HeaderQueue: q},
		}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := ch.QueueDeclarePassive(wire.DeadLetterQueue(q), false, false, false, false, nil)
		if err == nil && got.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach %d messages: %+v %v", wire.DeadLetterQueue(q), n, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func deleteExchange(ex string) {
	conn, err := amqp.Dial(URL())
	if err != nil {
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		_ = ch.ExchangeDelete(ex, false, false)
	}
}

// A broker that does not answer one channel costs the caller that channel
// only: each call below gives up on its own channel at its deadline, and
// the connection, a consumer on it and publishes through it go on (the
// proxy holds back that channel's frames only). The abandoned channels'
// goroutines end when the connection closes.
func TestAnAbandonedChannelLeavesTheConnectionToTheOthers(t *testing.T) {
	leakCheck(t)
	q := queue(t, "ctx-one-channel", nil)
	other := queue(t, "ctx-other", nil)
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := dialQuiet(t, "amqp://guest:guest@"+px.Addr()+"/", runtime.WithHeartbeat(stallBeat))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	evs := newEvents()
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(_ context.Context, m *runtime.Message[string]) runtime.Ack { evs.add(m); return runtime.Accept() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, c, q, "before")
	evs.waitFor(t, 10*time.Second, "the first message is handled", func(e []event) bool { return count(e, "before") == 1 })
	since := c.State().Since
	calls := []struct {
		name string
		at   Method
		call func(context.Context) error
	}{
		{"message-count", QueueDeclare, func(ctx context.Context) error { _, err := c.MessageCount(ctx, other); return err }},
		{"pull", BasicGet, func(ctx context.Context) error { _, err := c.Pull(ctx, other); return err }},
		{"declare", QueueBind, func(ctx context.Context) error {
			return c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: other}))
		}},
		{"consume", BasicConsume, func(ctx context.Context) error {
			cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: other, Routes: []runtime.Route{
				runtime.Handle(text, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
			}})
			if err == nil {
				cs.Close(ctx)
			}
			return err
		}},
	}
	for _, tc := range calls {
		px.StallChannelAt(tc.at, 1)
		ctx, cancel := context.WithTimeout(context.Background(), stallCtx)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- tc.call(ctx) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(stallCtx + 10*time.Second):
			// The connection is alive: a call that waits for its channel's
			// reply would wait for ever.
			t.Fatalf("%s did not return %s after its %s ctx", tc.name, 10*time.Second+stallCtx, stallCtx)
		}
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not the connection") {
			t.Fatalf("%s: err = %v, want ctx's deadline and the channel abandoned, not the connection", tc.name, err)
		}
		if took > stallCtx+stallMargin {
			t.Errorf("%s returned %s after its %s ctx began", tc.name, took.Round(time.Millisecond), stallCtx)
		}
		// The connection is the same, and works for everyone else.
		body := "after-" + tc.name
		publish(t, c, q, body)
		evs.waitFor(t, 10*time.Second, body+" is handled", func(e []event) bool { return count(e, body) == 1 })
		if _, err := c.MessageCount(ctxFor(t, 5*time.Second), q); err != nil {
			t.Errorf("after %s: MessageCount on a fresh channel: %v", tc.name, err)
		}
	}
	if st := c.State(); st.State != runtime.StateConnected || !st.Since.Equal(since) {
		t.Errorf("State = %+v, want the connection of %s still up", st, since)
	}
	if st := cs.Stats(); st.State != "consuming" {
		t.Errorf("the consumer is %s, want consuming", st.State)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cs.Close(ctx); err != nil {
		t.Errorf("Consumer.Close: %v", err)
	}
}

// A dead session's channel whose close the broker does not answer costs
// nothing else: the consumer whose queue was deleted (the broker cancels
// its subscription) closes its channel in the background, and the
// connection and another consumer on it go on. (Its close used to wait 5s
// and then close the whole connection.)
func TestADeadSessionsUnansweredCloseLeavesTheConnection(t *testing.T) {
	leakCheck(t)
	q := queue(t, "ctx-dead-keep", nil)
	gone := queue(t, "ctx-dead-gone", nil)
	px, err := NewProxy(fmt.Sprintf("127.0.0.1:%d", AMQPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c := dialQuiet(t, "amqp://guest:guest@"+px.Addr()+"/", runtime.WithHeartbeat(stallBeat))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	}()
	evs := newEvents()
	consume := func(queue string) *runtime.Consumer {
		cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: queue, Routes: []runtime.Route{
			runtime.Handle(text, func(_ context.Context, m *runtime.Message[string]) runtime.Ack { evs.add(m); return runtime.Accept() }),
		}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	keep, dead := consume(q), consume(gone)
	since := c.State().Since
	hit := px.StallChannelAt(ChannelClose, 1)
	_, ch := raw(t)
	if _, err := ch.QueueDelete(gone, false, false, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hit:
	case <-time.After(10 * time.Second):
		t.Fatal("the consumer of the deleted queue did not close its channel")
	}
	// Past the 5s the close used to be given before the connection went.
	time.Sleep(6 * time.Second)
	publish(t, c, q, "after")
	evs.waitFor(t, 10*time.Second, "a message on the other queue is handled", func(e []event) bool { return count(e, "after") == 1 })
	if st := c.State(); st.State != runtime.StateConnected || !st.Since.Equal(since) {
		t.Errorf("State = %+v, want the connection of %s still up", st, since)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := keep.Close(ctx); err != nil {
		t.Errorf("Close of the other consumer: %v", err)
	}
	_ = dead.Close(ctx)
}
