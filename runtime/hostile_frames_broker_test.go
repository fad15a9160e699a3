package runtime_test

// Hostile header tables against the broker (issue 19, items 1 and 2): a
// table amqp091-go cannot read (nested 40 deep, 8,193 entries) and a
// message whose headers sit just under the broker's frame_max, so that a
// copy of it with the x-acemq-* headers added would not fit. Each test runs
// in a vhost of its own: before the fix these messages closed the runtime's
// connection again and again.

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// deepTable is a table that nests n tables deep under the key "deep".
func deepTable(n int) amqp.Table {
	var t amqp.Table = amqp.Table{"leaf": "x"}
	for range n - 1 {
		t = amqp.Table{"n": t}
	}
	return amqp.Table{"deep": t}
}

// wideTable is a table of n entries w0000…
func wideTable(n int) amqp.Table {
	t := amqp.Table{}
	for i := range n {
		t[fmt.Sprintf("w%05d", i)] = ""
	}
	return t
}

// vhostRaw is a plain amqp091 channel on the vhost u, with confirms.
func vhostRaw(t *testing.T, u string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(u)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

func vhostPublish(t *testing.T, ch *amqp.Channel, q string, p amqp.Publishing) {
	t.Helper()
	dc, err := ch.PublishWithDeferredConfirm("", q, true, false, p)
	if err != nil {
		t.Fatalf("publish to %s: %v", q, err)
	}
	if !dc.Wait() {
		t.Fatalf("publish to %s: nacked", q)
	}
}

// vhostDrain takes n messages from q within d.
func vhostDrain(t *testing.T, ch *amqp.Channel, q string, n int, d time.Duration) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	deadline := time.Now().Add(d)
	for len(out) < n {
		m, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatalf("get from %s: %v", q, err)
		}
		if ok {
			out = append(out, m)
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages on %s within %s", len(out), n, q, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out
}

// TestUnreadableHeadersAreParked: a message whose header table amqp091-go
// cannot read (nested 40 deep; 8,193 entries) is parked with a reason that
// says what was dropped, its identity kept; the message behind it is
// handled; the connection is never lost, so a publisher and another
// consumer on it go on.
func TestUnreadableHeadersAreParked(t *testing.T) {
	t.Parallel()
	u := acemqtest.VHost(t)
	raw := vhostRaw(t, u)
	const q, other = "hostile", "other"
	for _, name := range []string{q, other} {
		if _, err := raw.QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	live := c.AMQPForTest()
	wide := wideTable(8193)
	wide[wire.HeaderID] = "wide-id"
	deep := deepTable(40)
	deep[wire.HeaderID] = "deep-id"
	deep["kept"] = "yes"
	vhostPublish(t, raw, q, textMessage("deep", deep))
	vhostPublish(t, raw, q, textMessage("wide", wide))
	vhostPublish(t, raw, q, textMessage("fine", nil))

	_, rec := consume(t, c, q, nil, accept)
	_, otherRec := consume(t, c, other, nil, accept)
	var published atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		// A publisher on the same connection, all along.
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			err := runtime.Publish(ctxFor(t, 5*time.Second), c, textType, "", fmt.Sprint("p", i), runtime.WithRoutingKey(other))
			if err != nil {
				t.Errorf("publish %d on the consumer's connection: %v", i, err)
				return
			}
			published.Add(1)
		}
	}()
	rec.waitFor(t, wait, `"fine" handled`, func(s []seen) bool { return len(s) > 0 && s[len(s)-1].Body == "fine" })
	otherRec.waitN(t, 5, wait)
	close(stop)
	<-done

	parked := vhostDrain(t, raw, wire.ParkedQueue(q), 2, wait)
	byBody := map[string]amqp.Delivery{}
	for _, d := range parked {
		byBody[string(d.Body)] = d
	}
	for body, want := range map[string][]string{
		"deep": {"could not be read", `"deep"`, "nests 40 tables deep", "amqp091-go reads 32"},
		"wide": {"could not be read", "8194 entries", "amqp091-go reads 8192"},
	} {
		d, ok := byBody[body]
		if !ok {
			t.Errorf("%s: not on %s", body, wire.ParkedQueue(q))
			continue
		}
		reason := hdr(t, d, wire.HeaderError)
		for _, w := range want {
			if !strings.Contains(reason, w) {
				t.Errorf("%s: x-acemq-error %q does not say %q", body, reason, w)
			}
		}
		if id := hdr(t, d, wire.HeaderID); id != body+"-id" {
			t.Errorf("%s: x-acemq-id = %q, want %q", body, id, body+"-id")
		}
		if got := hdr(t, d, wire.HeaderQueue); got != q {
			t.Errorf("%s: x-acemq-queue = %q", body, got)
		}
		dropped := hdr(t, d, wire.HeaderDropped)
		if !strings.Contains(dropped, "unreadable") {
			t.Errorf("%s: %s = %q", body, wire.HeaderDropped, dropped)
		}
	}
	if d := byBody["deep"]; d.Headers["kept"] != "yes" {
		t.Errorf("deep: the readable header kept is %v; headers %v", d.Headers["kept"], d.Headers)
	}
	for _, s := range rec.all() {
		if s.Body != "fine" {
			t.Errorf("the handler was called with %q", s.Body)
		}
	}
	if now := c.AMQPForTest(); now != live {
		t.Errorf("the connection was lost and dialled again")
	}
}

// padding is a header value that brings a message's header frame to
// 130,400 bytes of padding, just under the broker's frame_max (131072).
var padding = strings.Repeat("p", 130_400)

// TestOversizedCopyIsTrimmed: the dead letter of a Rejected message and
// the park of an undecodable one, whose headers sit just under frame_max,
// go out with the foreign header dropped (and said so), the identity kept;
// each is handled once, never in a loop.
func TestOversizedCopyIsTrimmed(t *testing.T) {
	t.Parallel()
	u := acemqtest.VHost(t)
	raw := vhostRaw(t, u)
	const q = "oversized"
	if _, err := raw.QueueDeclare(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	live := c.AMQPForTest()
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack { return runtime.Reject(fmt.Errorf("refused: %s", strings.Repeat("r", 5000))) })

	reject := textMessage("reject-me", amqp.Table{"padding": padding, "small": "kept", wire.HeaderID: "reject-id",
		wire.HeaderFirstSeen: "2026-01-02T03:04:05.000Z"})
	reject.CorrelationId = "corr-1"
	vhostPublish(t, raw, q, reject)
	// Its reason is short: padding closer to the limit.
	undecodable := textMessage("undecodable", amqp.Table{"padding": strings.Repeat("p", 130_950), wire.HeaderID: "park-id"})
	undecodable.Type = "no.such.type"
	vhostPublish(t, raw, q, undecodable)

	dl := vhostDrain(t, raw, wire.DeadLetterQueue(q), 1, wait)[0]
	pk := vhostDrain(t, raw, wire.ParkedQueue(q), 1, wait)[0]
	for _, d := range []amqp.Delivery{dl, pk} {
		if _, ok := d.Headers["padding"]; ok {
			t.Errorf("%s: the copy kept the padding", d.Body)
		}
		dropped := hdr(t, d, wire.HeaderDropped)
		if !strings.Contains(dropped, "padding") || !strings.Contains(dropped, "frame_max") {
			t.Errorf("%s: %s = %q, want it to name padding and frame_max", d.Body, wire.HeaderDropped, dropped)
		}
		if got := hdr(t, d, wire.HeaderQueue); got != q {
			t.Errorf("%s: x-acemq-queue = %q", d.Body, got)
		}
	}
	if got := hdr(t, dl, wire.HeaderID); got != "reject-id" {
		t.Errorf("dead letter: x-acemq-id = %q", got)
	}
	if got := hdr(t, dl, wire.HeaderFirstSeen); got != "2026-01-02T03:04:05.000Z" {
		t.Errorf("dead letter: x-acemq-first-seen = %q", got)
	}
	if dl.CorrelationId != "corr-1" || dl.Type != textType.Name() {
		t.Errorf("dead letter: correlation %q type %q", dl.CorrelationId, dl.Type)
	}
	if dl.Headers["small"] != "kept" {
		t.Errorf("dead letter: the small header is %v, want it kept", dl.Headers["small"])
	}
	if r := hdr(t, dl, wire.HeaderError); !strings.Contains(r, "refused: rrr") {
		t.Errorf("dead letter: x-acemq-error = %.40q", r)
	}
	if got := hdr(t, pk, wire.HeaderID); got != "park-id" {
		t.Errorf("park: x-acemq-id = %q", got)
	}
	if r := hdr(t, pk, wire.HeaderError); !strings.Contains(r, `no handler for type "no.such.type"`) {
		t.Errorf("park: x-acemq-error = %q", r)
	}
	time.Sleep(settle)
	if n := rec.len(); n != 1 {
		t.Errorf("the handler was called %d times, want 1: %s", n, describe(rec.all()))
	}
	if now := c.AMQPForTest(); now != live {
		t.Errorf("the connection was lost and dialled again")
	}
}

// hdr reads a string header of a raw delivery, naming only the header keys
// when it is missing (the values here are 130 KB).
func hdr(t *testing.T, d amqp.Delivery, k string) string {
	t.Helper()
	s, ok := d.Headers[k].(string)
	if !ok {
		keys := make([]string, 0, len(d.Headers))
		for key := range d.Headers {
			keys = append(keys, key)
		}
		if len(keys) > 20 {
			keys = keys[:20]
		}
		t.Errorf("%s: header %s is %T, want a string; keys %v", d.Body, k, d.Headers[k], keys)
	}
	return s
}

// TestOversizedPublishIsRefused: an application publish whose headers do
// not fit frame_max is refused before it is written (ErrInvalidMessage),
// and the connection is kept; the next publish goes out.
func TestOversizedPublishIsRefused(t *testing.T) {
	t.Parallel()
	q := brokertestQueue(t)
	c := dial(t)
	live := c.AMQPForTest()
	err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, "", "big", runtime.WithRoutingKey(q),
		runtime.WithHeaders(map[string]any{"padding": strings.Repeat("p", 131_072)}))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), "frame_max 131072") {
		t.Fatalf("Publish = %v, want ErrInvalidMessage naming frame_max 131072", err)
	}
	publishText(t, c, q, "small")
	if got := string(getOne(t, q, wait).Body); got != "small" {
		t.Errorf("%s holds %q", q, got)
	}
	if now := c.AMQPForTest(); now != live {
		t.Errorf("the connection was lost and dialled again")
	}
}

func brokertestQueue(t *testing.T) string {
	t.Helper()
	q := acemqtest.Queue(t, "oversized-publish")
	rawQueue(t, q, nil)
	return q
}

// TestFrameErrorsIsolateAndBackOff: where the header filter is not in
// place (under amqps; here switched off), a message whose header table
// amqp091-go cannot read closes the consumer's connection on every
// delivery. The consumer is counted and reported failing, moves to a
// connection of its own after the first frame error, and backs off (1 s,
// 2 s, 4 s …, not 59 deaths in 6 s); a publisher and another consumer on
// the shared connection go on; the message stays on its queue.
func TestFrameErrorsIsolateAndBackOff(t *testing.T) {
	t.Parallel()
	u := acemqtest.VHost(t)
	raw := vhostRaw(t, u)
	const bad, good = "bad", "good"
	for _, name := range []string{bad, good} {
		if _, err := raw.QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	vhostPublish(t, raw, bad, textMessage("deep", deepTable(40)))
	reader := sdkmetric.NewManualReader()
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), u, runtime.WithoutHeaderFilterForTest(),
		runtime.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	badCs, badRec := consume(t, c, bad, nil, accept)
	waitPoint(t, reader, wire.MetricFrameErrors, queueKey(bad), 1, true)
	st := badCs.Stats()
	if st.State != runtime.ConsumerFailing || st.FrameErrors < 1 || !strings.Contains(st.LastError, "frame the client cannot read") {
		t.Errorf("Stats = %+v, want failing with the frame error", st)
	}
	rec := httptest.NewRecorder()
	runtime.HealthHandler(c, badCs).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), `"state":"failing"`) {
		t.Errorf("health: %d %s, want 503 naming the failing consumer", rec.Code, rec.Body)
	}

	// From now on the shared connection is the publishers' and the
	// other consumer's alone.
	if err := runtime.Publish(ctxFor(t, 10*time.Second), c, textType, "", "warm-up", runtime.WithRoutingKey(good)); err != nil {
		t.Fatalf("first publish after the frame error: %v", err)
	}
	live := c.AMQPForTest()
	_, goodRec := consume(t, c, good, nil, accept)
	began := time.Now()
	const n = 30
	for i := range n {
		if err := runtime.Publish(ctxFor(t, 5*time.Second), c, textType, "", fmt.Sprint("p", i), runtime.WithRoutingKey(good)); err != nil {
			t.Fatalf("publish %d on the shared connection: %v", i, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	goodRec.waitN(t, n+1, wait)
	watched := time.Since(began)
	if now := c.AMQPForTest(); now != live {
		t.Errorf("the shared connection was lost while the failing consumer was on its own")
	}
	// 1 s, 2 s, 4 s, 8 s … between deaths: within the 6 s or so watched,
	// a handful, where without the backoff it was ~10 a second.
	errs := badCs.Stats().FrameErrors
	if maxErrs := 2 + int(watched/time.Second)/2; errs > maxErrs {
		t.Errorf("%d frame errors in %s, want at most %d: the consumer does not back off", errs, watched.Round(time.Millisecond), maxErrs)
	}
	if badRec.len() != 0 {
		t.Errorf("the handler was called: %s", describe(badRec.all()))
	}
	if q, err := raw.QueueDeclarePassive(bad, true, false, false, false, nil); err != nil || q.Messages+q.Consumers == 0 {
		t.Errorf("%s: %+v %v, want the message still there", bad, q, err)
	}
	t.Logf("%d frame errors in %s", errs, watched.Round(time.Millisecond))
}
