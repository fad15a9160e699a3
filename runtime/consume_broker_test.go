package runtime_test

// Consume, against the broker: the four acks, Fatal, panics, the default
// policy, what a handler is given, and the consumer's own declarations.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/registry"
	amqp "github.com/rabbitmq/amqp091-go"
)

// settle gives a consumer time to (wrongly) do more than it should.
const settle = 500 * time.Millisecond

func TestNoRetryDeadLettersAfterOneAttempt(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "noretry")
	rawQueue(t, q, nil) // only q: the test never declares q.dlq
	c := dial(t)
	_, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
		return runtime.Retry(errors.New("the warehouse is not answering"))
	})

	// The consumer declared q.dlq and q.parked before it subscribed.
	for _, n := range []string{q + ".dlq", q + ".parked"} {
		info := brokertest.QueueDetails(t, n)
		if !info.Durable || info.Type != "classic" {
			t.Errorf("%s: durable %v type %q, want durable classic, declared by the consumer", n, info.Durable, info.Type)
		}
	}

	body := "order A-1 — ünïcödé\n\ttabs and a trailing space "
	publishText(t, c, q, body, runtime.WithHeaders(map[string]any{"tenant": "t1"}), runtime.WithCorrelationID("corr-1"))
	d := getOne(t, q+".dlq", wait)
	// Everything the message had is kept; what is added is in headers.
	if d.ContentType != wire.ContentTypeText || d.Type != textType.Name() || d.CorrelationId != "corr-1" ||
		d.DeliveryMode != amqp.Persistent || d.Headers["tenant"] != "t1" {
		t.Errorf("dead letter lost properties: content_type %q type %q correlation_id %q delivery mode %d tenant %v",
			d.ContentType, d.Type, d.CorrelationId, d.DeliveryMode, d.Headers["tenant"])
	}
	if got := headerString(t, d, wire.HeaderError); got != "gave up after 1 attempts: the warehouse is not answering" {
		t.Errorf("x-acemq-error = %q", got)
	}
	if got := headerString(t, d, wire.HeaderQueue); got != q {
		t.Errorf("x-acemq-queue = %q, want %q", got, q)
	}
	if string(d.Body) != body {
		t.Errorf("dead letter body = %q, want %q byte for byte", d.Body, body)
	}
	calls := rec.all()
	if len(calls) != 1 || calls[0].Envelope.Attempt != 1 {
		t.Fatalf("handler calls: %s; want exactly one, attempt 1", describe(calls))
	}
	if id := headerString(t, d, wire.HeaderID); id == "" || id != calls[0].Envelope.ID {
		t.Errorf("dead letter x-acemq-id %q, want the handler's Envelope.ID %q", id, calls[0].Envelope.ID)
	}
	if _, ok := d.Headers["x-death"]; ok {
		t.Errorf("dead letter carries x-death: %v", d.Headers["x-death"])
	}
	time.Sleep(settle)
	if n := rec.len(); n != 1 {
		t.Errorf("handler called %d times under NoRetry, want 1", n)
	}
	if n := depth(t, q); n != 0 {
		t.Errorf("%s still holds %d messages", q, n)
	}
}

func TestHandlerOutcomes(t *testing.T) {
	t.Parallel()
	noSuchItem := errors.New("no such item")
	cases := []struct {
		name    string
		policy  *runtime.RetryPolicy
		decide  func(seen) runtime.Ack
		to      string // suffix of the queue the message must land on
		reason  string // exact x-acemq-error, or a prefix when it ends in "…"
		handled int    // handler calls expected
	}{
		{"reject", ptr(runtime.Fixed(3, 100*time.Millisecond)),
			func(seen) runtime.Ack { return runtime.Reject(errors.New("no customer id")) },
			".dlq", "rejected by the handler: no customer id", 1},
		{"park", ptr(runtime.Fixed(3, 100*time.Millisecond)),
			func(seen) runtime.Ack { return runtime.Park(errors.New("cannot use this")) },
			".parked", "parked by the handler: cannot use this", 1},
		{"fatal inside retry", ptr(runtime.Fixed(3, 100*time.Millisecond)),
			func(seen) runtime.Ack { return runtime.Retry(runtime.Fatal(noSuchItem)) },
			".dlq", "rejected by the handler: no such item", 1},
		{"fatal wrapped further up", ptr(runtime.Fixed(3, 100*time.Millisecond)),
			func(seen) runtime.Ack { return runtime.Retry(fmt.Errorf("reserve: %w", runtime.Fatal(noSuchItem))) },
			".dlq", "rejected by the handler: reserve: no such item", 1},
		{"retry until exhausted", ptr(runtime.Fixed(3, 100*time.Millisecond)),
			func(m seen) runtime.Ack { return runtime.Retry(fmt.Errorf("down on attempt %d", m.Envelope.Attempt)) },
			".dlq", "gave up after 3 attempts: down on attempt 3", 3},
		{"panic is a retry", ptr(runtime.Fixed(2, 100*time.Millisecond)),
			func(seen) runtime.Ack { panic("boom in the handler") },
			".dlq", "gave up after 2 attempts: …", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "outcome")
			rawQueue(t, q, nil)
			c := dial(t)
			_, rec := consume(t, c, q, tc.policy, tc.decide)
			body := "body of " + tc.name
			publishText(t, c, q, body)
			d := getOne(t, q+tc.to, wait)
			got := headerString(t, d, wire.HeaderError)
			if prefix, ok := strings.CutSuffix(tc.reason, "…"); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("x-acemq-error = %q, want it to start %q", got, prefix)
				}
			} else if got != tc.reason {
				t.Errorf("x-acemq-error = %q, want %q", got, tc.reason)
			}
			if tc.name == "panic is a retry" && !strings.Contains(got, "boom in the handler") {
				t.Errorf("x-acemq-error = %q, want the panic value in it", got)
			}
			if got := headerString(t, d, wire.HeaderQueue); got != q {
				t.Errorf("x-acemq-queue = %q, want %q", got, q)
			}
			if string(d.Body) != body {
				t.Errorf("body = %q, want %q", d.Body, body)
			}
			time.Sleep(settle)
			if n := rec.len(); n != tc.handled {
				t.Errorf("handler called %d times, want %d: %s", n, tc.handled, describe(rec.all()))
			}
			other := map[string]string{".dlq": ".parked", ".parked": ".dlq"}[tc.to]
			if n := depth(t, q+other); n != 0 {
				t.Errorf("%s%s holds %d messages, want 0", q, other, n)
			}
		})
	}
}

func TestRetryAdvancesAttemptKeepsID(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "retry.ids")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(3, 200*time.Millisecond)), func(m seen) runtime.Ack {
		return runtime.Retry(fmt.Errorf("try %d failed", m.Envelope.Attempt))
	})
	publishText(t, c, q, "again")
	calls := rec.waitN(t, 3, wait)
	d := getOne(t, q+".dlq", wait)

	for i, call := range calls {
		if call.Envelope.Attempt != i+1 {
			t.Errorf("call %d: Attempt %d, want %d", i, call.Envelope.Attempt, i+1)
		}
		if call.Envelope.ID == "" || call.Envelope.ID != calls[0].Envelope.ID {
			t.Errorf("call %d: ID %q, want the first delivery's %q", i, call.Envelope.ID, calls[0].Envelope.ID)
		}
		wantErr := ""
		if i > 0 {
			wantErr = fmt.Sprintf("try %d failed", i)
		}
		if call.Envelope.Error != wantErr {
			t.Errorf("call %d: Envelope.Error %q, want the previous plain reason %q", i, call.Envelope.Error, wantErr)
		}
		if call.Body != "again" {
			t.Errorf("call %d: body %q", i, call.Body)
		}
		if !call.Envelope.FirstSeen.Equal(calls[0].Envelope.FirstSeen) || call.Envelope.FirstSeen.IsZero() {
			t.Errorf("call %d: FirstSeen %v, want the first delivery's %v kept", i, call.Envelope.FirstSeen, calls[0].Envelope.FirstSeen)
		}
		if call.Redelivered {
			t.Errorf("call %d arrived redelivered: a retry is a republish, never a requeue", i)
		}
		if i > 0 && call.At.Sub(calls[i-1].At) < 200*time.Millisecond {
			t.Errorf("attempt %d came %s after the previous one, want ≥ 200ms (Fixed has no jitter)", i+1, call.At.Sub(calls[i-1].At))
		}
	}
	if got := headerString(t, d, wire.HeaderError); got != "gave up after 3 attempts: try 3 failed" {
		t.Errorf("dead letter x-acemq-error = %q", got)
	}
	if got := headerString(t, d, wire.HeaderID); got != calls[0].Envelope.ID {
		t.Errorf("dead letter x-acemq-id = %q, want %q", got, calls[0].Envelope.ID)
	}
	if got := d.MessageId; got != calls[0].Envelope.ID {
		t.Errorf("dead letter message_id = %q, want %q", got, calls[0].Envelope.ID)
	}
	time.Sleep(settle)
	if n := rec.len(); n != 3 {
		t.Errorf("handler called %d times, want 3", n)
	}
}

func TestRetryCountSurvivesConsumerRestart(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "retry.restart")
	rawQueue(t, q, nil)
	c := dial(t)
	policy := ptr(runtime.Fixed(3, 2*time.Second))
	first, rec1 := consume(t, c, q, policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("first consumer failed")) })
	publishText(t, c, q, "survivor")
	calls := rec1.waitN(t, 1, wait)
	if err := first.Close(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatalf("Close of the first consumer: %v", err)
	}

	_, rec2 := consume(t, c, q, policy, accept)
	got := rec2.waitN(t, 1, wait)[0]
	if got.Envelope.Attempt != 2 {
		t.Errorf("after a restart the message came back on attempt %d, want 2 (the count rides on the message)", got.Envelope.Attempt)
	}
	if got.Envelope.ID != calls[0].Envelope.ID {
		t.Errorf("ID after restart %q, want %q", got.Envelope.ID, calls[0].Envelope.ID)
	}
	if got.Envelope.Error != "first consumer failed" {
		t.Errorf("Envelope.Error after restart %q, want %q", got.Envelope.Error, "first consumer failed")
	}
	if n := rec1.len(); n != 1 {
		t.Errorf("the closed consumer handled %d messages, want 1", n)
	}
}

func TestDecodeFailuresAreParked(t *testing.T) {
	t.Parallel()
	type order struct {
		OrderID string `json:"order_id"`
	}
	const schema = `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"properties": {"order_id": {"type": "string"}},
		"required": ["order_id"]
	}`
	cases := []struct {
		name, contentType, body, reason string
	}{
		{"not JSON", wire.ContentTypeJSON, "this is not JSON", "could not be decoded: …"},
		{"breaks the schema", wire.ContentTypeJSON, `{"order_id": 42}`, "could not be decoded: …order_id"},
		{"missing required", wire.ContentTypeJSON, `{"customer": "C-9"}`, "could not be decoded: …order_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mt := runtime.NewJSONType[order]("acemq.test.order."+brokertest.Name("v"), schema)
			q := brokertest.Queue(t, "decode")
			rawQueue(t, q, nil)
			c := dial(t)
			var handled atomic.Int32
			spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(mt,
				func(context.Context, *runtime.Message[order]) runtime.Ack { handled.Add(1); return runtime.Accept() })}}
			cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec)
			if err != nil {
				t.Fatalf("Consume: %v", err)
			}
			t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })

			rawPublish(t, q, amqp.Publishing{ContentType: tc.contentType, Type: mt.Name(), Body: []byte(tc.body)})
			d := getOne(t, q+".parked", wait)
			checkParked(t, d, q, tc.body, tc.reason)
			if n := handled.Load(); n != 0 {
				t.Errorf("the handler ran %d times on an undecodable body, want 0", n)
			}

			// A valid body still reaches the handler.
			if err := runtime.Publish(ctxFor(t, 10*time.Second), c, mt, "", order{OrderID: "A-1"}, runtime.WithRoutingKey(q)); err != nil {
				t.Fatalf("Publish of a valid order: %v", err)
			}
			deadline := time.Now().Add(wait)
			for handled.Load() != 1 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := handled.Load(); n != 1 {
				t.Errorf("a valid order reached the handler %d times, want 1", n)
			}
		})
	}
}

// checkParked checks a parked message: its reason ("…" separates a prefix
// from a text the rest must contain), origin queue and body.
func checkParked(t *testing.T, d amqp.Delivery, q, body, reason string) {
	t.Helper()
	got := headerString(t, d, wire.HeaderError)
	prefix, rest, cut := strings.Cut(reason, "…")
	if !cut && got != reason {
		t.Errorf("x-acemq-error = %q, want %q", got, reason)
	}
	if cut && (!strings.HasPrefix(got, prefix) || !strings.Contains(got[len(prefix):], rest)) {
		t.Errorf("x-acemq-error = %q, want it to start %q and then mention %q", got, prefix, rest)
	}
	if got := headerString(t, d, wire.HeaderQueue); got != q {
		t.Errorf("x-acemq-queue = %q, want %q", got, q)
	}
	if string(d.Body) != body {
		t.Errorf("parked body = %q, want %q byte for byte", d.Body, body)
	}
}

func TestTruncatedAvroIsParked(t *testing.T) {
	t.Parallel()
	type payment struct {
		ID     string `avro:"id"`
		Amount int64  `avro:"amount"`
	}
	const schema = `{"type":"record","name":"Payment","namespace":"acemq.test",
		"fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"}]}`
	mt := runtime.NewAvroType[payment]("acemq.test.payment.v1", "acemq.test.payment", schema)
	q := brokertest.Queue(t, "avro")
	rawQueue(t, q, nil)
	reg := registry.NewFingerprint()
	c := dial(t, runtime.WithSchemaRegistry(reg))
	got := make(chan payment, 4)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(mt,
		func(_ context.Context, m *runtime.Message[payment]) runtime.Ack {
			got <- m.Payload
			return runtime.Accept()
		})}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec)
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })

	codec, err := mt.Codec(reg)
	if err != nil {
		t.Fatalf("Codec: %v", err)
	}
	full, err := codec.Encode(ctxFor(t, 5*time.Second), payment{ID: "P-1 with a long enough id", Amount: 4250})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if len(full) < 8 || full[0] != 0 {
		t.Fatalf("Avro body %x is not in the Confluent wire format (magic byte 0, 4-byte id)", full)
	}
	truncated := full[:len(full)-4]
	rawPublish(t, q, amqp.Publishing{ContentType: wire.ContentTypeAvro, Type: mt.Name(), Body: truncated})
	d := getOne(t, q+".parked", wait)
	checkParked(t, d, q, string(truncated), "could not be decoded: …")

	// The whole body decodes.
	want := payment{ID: "P-2", Amount: 99}
	if err := runtime.Publish(ctxFor(t, 10*time.Second), c, mt, "", want, runtime.WithRoutingKey(q)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	select {
	case p := <-got:
		if p != want {
			t.Errorf("handler got %+v, want %+v", p, want)
		}
	case <-time.After(wait):
		t.Fatalf("a valid Avro message never reached the handler")
	}
	if len(got) != 0 {
		t.Errorf("the truncated body reached the handler")
	}
}

func TestTypeWithoutHandlerIsParked(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "nohandler")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, nil, accept)
	body := "for nobody \x00\xff\xfe not even UTF-8"
	rawPublish(t, q, amqp.Publishing{ContentType: "application/octet-stream", Type: "x", Body: []byte(body)})
	d := getOne(t, q+".parked", wait)
	checkParked(t, d, q, body, `could not be decoded: no handler for type "x"`)
	if n := rec.len(); n != 0 {
		t.Errorf("the handler for %s ran for type x", textType.Name())
	}
}

func TestGiveUpAfterDeadLettersOldMessage(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "giveup")
	rawQueue(t, q, nil)
	c := dial(t)
	policy := runtime.Fixed(5, 100*time.Millisecond).WithGiveUpAfter(time.Minute)
	_, rec := consume(t, c, q, &policy, func(seen) runtime.Ack { return runtime.Retry(errors.New("still down")) })
	hourAgo := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	rawPublish(t, q, textMessage("old news", amqp.Table{wire.HeaderFirstSeen: hourAgo, wire.HeaderID: "old-1"}))
	d := getOne(t, q+".dlq", wait)
	if got := headerString(t, d, wire.HeaderError); got != "gave up after 1 attempts (older than 1m0s): still down" {
		t.Errorf("x-acemq-error = %q", got)
	}
	if got := headerString(t, d, wire.HeaderID); got != "old-1" {
		t.Errorf("x-acemq-id = %q, want old-1 kept", got)
	}
	if got := headerString(t, d, wire.HeaderFirstSeen); got != hourAgo {
		t.Errorf("x-acemq-first-seen = %q, want %q kept", got, hourAgo)
	}
	time.Sleep(settle)
	if n := rec.len(); n != 1 {
		t.Errorf("handler called %d times, want 1", n)
	}

	// A young message on the same policy is retried.
	publishText(t, c, q, "young")
	rec.waitFor(t, wait, "attempt 2 of the young message", func(calls []seen) bool {
		return slices.ContainsFunc(calls, func(c seen) bool { return c.Body == "young" && c.Envelope.Attempt == 2 })
	})
}

func TestPolicyPrecedence(t *testing.T) {
	t.Parallel()
	fail := func(seen) runtime.Ack { return runtime.Retry(errors.New("no")) }
	cases := []struct {
		name     string
		dialOpts []runtime.DialOption
		spec     *runtime.RetryPolicy
		opts     []runtime.ConsumeOption
		attempts int
	}{
		{"default is NoRetry", nil, nil, nil, 1},
		{"connection's", []runtime.DialOption{runtime.WithRetry(runtime.Fixed(2, 50*time.Millisecond))}, nil, nil, 2},
		{"manifest's over connection's", []runtime.DialOption{runtime.WithRetry(runtime.Fixed(2, 50*time.Millisecond))},
			ptr(runtime.Fixed(3, 50*time.Millisecond)), nil, 3},
		{"option's over manifest's", []runtime.DialOption{runtime.WithRetry(runtime.Fixed(2, 50*time.Millisecond))},
			ptr(runtime.Fixed(3, 50*time.Millisecond)), []runtime.ConsumeOption{runtime.WithRetry(runtime.Fixed(4, 50*time.Millisecond))}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "precedence")
			rawQueue(t, q, nil)
			c := dial(t, tc.dialOpts...)
			_, rec := consume(t, c, q, tc.spec, fail, tc.opts...)
			publishText(t, c, q, "x")
			d := getOne(t, q+".dlq", wait)
			if got, want := headerString(t, d, wire.HeaderError), fmt.Sprintf("gave up after %d attempts: no", tc.attempts); got != want {
				t.Errorf("x-acemq-error = %q, want %q", got, want)
			}
			if n := rec.len(); n != tc.attempts {
				t.Errorf("handler called %d times, want %d", n, tc.attempts)
			}
		})
	}
}

func TestWithoutDeclare(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "nodeclare")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, nil, accept, runtime.WithoutDeclare())
	publishText(t, c, q, "read me")
	rec.waitN(t, 1, wait)
	if got := queuesUnder(t, q); !slices.Equal(got, []string{q}) {
		t.Errorf("WithoutDeclare: queues = %v, want only %s", got, q)
	}
}

func TestRequeueOnFailure(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "requeue")
	rawQueue(t, q, nil)
	c := dial(t)
	_, rec := consume(t, c, q, ptr(runtime.Fixed(3, time.Minute)), func(m seen) runtime.Ack {
		if !m.Redelivered {
			return runtime.Retry(errors.New("local and brief"))
		}
		return runtime.Accept()
	}, runtime.WithRequeueOnFailure())
	publishText(t, c, q, "bounce")
	calls := rec.waitN(t, 2, wait)
	// The requeue cannot advance x-acemq-attempt (the broker hands back
	// the same bytes); the envelope counts it all the same.
	if !calls[1].Redelivered || calls[1].Envelope.Attempt != 2 || calls[1].Envelope.ID != calls[0].Envelope.ID {
		t.Errorf("requeued delivery: redelivered %v attempt %d id %q; want a redelivery of the same message on attempt 2 (%q)",
			calls[1].Redelivered, calls[1].Envelope.Attempt, calls[1].Envelope.ID, calls[0].Envelope.ID)
	}
	if d := calls[1].At.Sub(calls[0].At); d > 30*time.Second {
		t.Errorf("requeue waited %s: it must not climb the ladder", d)
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			q := brokertest.Queue(t, "concurrency")
			rawQueue(t, q, nil)
			c := dial(t)
			var inFlight, most atomic.Int32
			release := make(chan struct{})
			_, rec := consume(t, c, q, nil, func(seen) runtime.Ack {
				now := inFlight.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				select {
				case <-release:
				case <-time.After(300 * time.Millisecond):
				}
				inFlight.Add(-1)
				return runtime.Accept()
			}, concurrency(n), runtime.WithPrefetch(10))
			for i := range 8 {
				publishText(t, c, q, fmt.Sprint(i))
			}
			rec.waitN(t, 8, wait)
			close(release)
			if got, want := int(most.Load()), max(n, 1); got != want {
				t.Errorf("WithConcurrency(%d): at most %d handlers ran at once, want %d (0: the default, 1)", n, got, want)
			}
		})
	}
}

// concurrency is WithConcurrency(n), or no option at all for 0.
func concurrency(n int) runtime.ConsumeOption {
	if n == 0 {
		return runtime.WithPrefetch(10)
	}
	return runtime.WithConcurrency(n)
}

func TestMessageFields(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "fields")
	rawQueue(t, q, nil)
	c := dial(t)

	// A message returned once by a raw reader is redelivered.
	rawPublish(t, q, textMessage("forged", amqp.Table{
		wire.HeaderID: "id-1", wire.HeaderAttempt: int64(1), wire.HeaderOrigin: "raw@test",
		"tenant": "t1", "x-acemq-private": "hidden",
	}))
	ch := rawChannel(t)
	m, ok, err := ch.Get(q, false)
	if err != nil || !ok {
		t.Fatalf("raw get: %v %v", ok, err)
	}
	if err := m.Nack(false, true); err != nil {
		t.Fatalf("raw nack: %v", err)
	}

	_, rec := consume(t, c, q, nil, accept)
	got := rec.waitN(t, 1, wait)[0]
	if got.Body != "forged" || got.RoutingKey != q || !got.Redelivered {
		t.Errorf("Message: body %q routing key %q redelivered %v; want forged, %q, true", got.Body, got.RoutingKey, got.Redelivered, q)
	}
	if got.Headers["tenant"] != "t1" {
		t.Errorf("Headers[tenant] = %v, want t1; headers %v", got.Headers["tenant"], got.Headers)
	}
	for k := range got.Headers {
		if strings.HasPrefix(k, "x-acemq-") {
			t.Errorf("Headers keeps %s: the x-acemq- namespace must be stripped", k)
		}
	}
	e := got.Envelope
	if e.ID != "id-1" || e.Origin != "raw@test" || e.Type != textType.Name() || e.Attempt != 1 || e.ContentType != wire.ContentTypeText {
		t.Errorf("Envelope = %+v", e)
	}

	// And through the runtime's own publish: application headers reach the
	// handler, the envelope does not.
	publishText(t, c, q, "own", runtime.WithHeaders(map[string]any{"tenant": "t2"}), runtime.WithCorrelationID("corr-7"))
	got = rec.waitN(t, 2, wait)[1]
	if got.Headers["tenant"] != "t2" || got.Redelivered || got.Envelope.CorrelationID != "corr-7" {
		t.Errorf("second message: headers %v redelivered %v correlation %q", got.Headers, got.Redelivered, got.Envelope.CorrelationID)
	}
	if got.Envelope.FirstSeen.IsZero() || time.Since(got.Envelope.FirstSeen) > time.Minute {
		t.Errorf("Envelope.FirstSeen = %v, want about now", got.Envelope.FirstSeen)
	}
}

func TestLongReasonIsCapped(t *testing.T) {
	t.Parallel()
	// A reason far above the broker's frame size (131072 bytes) must be
	// cut, or the header table closes the connection and the dead letter
	// never lands.
	q := brokertest.Queue(t, "longreason")
	rawQueue(t, q, nil)
	c := dial(t)
	long := strings.Repeat("é", 100_000) // 200 000 bytes
	_, rec := consume(t, c, q, nil, func(m seen) runtime.Ack {
		if m.Body == "long" {
			return runtime.Reject(errors.New(long))
		}
		return runtime.Accept()
	})
	publishText(t, c, q, "long")
	d := getOne(t, q+".dlq", wait)
	got := headerString(t, d, wire.HeaderError)
	if !strings.HasPrefix(got, "rejected by the handler: éé") {
		t.Errorf("x-acemq-error starts %q", got[:min(len(got), 40)])
	}
	if len(got) > 16*1024 {
		t.Errorf("x-acemq-error is %d bytes: cap it far below the frame size", len(got))
	}
	if !utf8.ValidString(got) {
		t.Errorf("x-acemq-error was cut inside a rune")
	}
	// The consumer and its connection carry on.
	publishText(t, c, q, "short")
	rec.waitFor(t, wait, "the next message", func(calls []seen) bool {
		return slices.ContainsFunc(calls, func(c seen) bool { return c.Body == "short" })
	})
}

func TestReadDeadLettersWithConsumer(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "readdlq")
	rawQueue(t, q, nil)
	c := dial(t)
	consume(t, c, q, ptr(runtime.Fixed(2, 100*time.Millisecond)), func(seen) runtime.Ack {
		return runtime.Retry(errors.New("the warehouse is not answering"))
	})
	publishText(t, c, q, "o-1", runtime.WithCorrelationID("order-o-1"))

	// A one-off reader of q.dlq: WithoutDeclare, so no q.dlq.dlq.
	_, rec := consume(t, c, wire.DeadLetterQueue(q), nil, accept, runtime.WithoutDeclare())
	got := rec.waitN(t, 1, wait)[0]
	e := got.Envelope
	if got.Body != "o-1" || e.Attempt != 2 || e.Queue != q || e.CorrelationID != "order-o-1" ||
		e.Error != "gave up after 2 attempts: the warehouse is not answering" {
		t.Errorf("dead letter as a handler sees it: body %q envelope %+v", got.Body, e)
	}
	if names := queuesUnder(t, q); slices.Contains(names, q+".dlq.dlq") {
		t.Errorf("the dead-letter reader declared %s.dlq.dlq", q)
	}
}

func TestConsumeMissingQueue(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "missing")
	c := dial(t)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(textType,
		func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec)
	if err == nil {
		_ = cs.Close(ctxFor(t, 5*time.Second))
		t.Fatalf("Consume of a queue that does not exist = nil error")
	}
	if !errors.Is(err, runtime.ErrQueueNotFound) || !strings.Contains(err.Error(), q) {
		t.Errorf("Consume of a missing queue: %v; want ErrQueueNotFound naming %s", err, q)
	}
	// The connection still works.
	rawQueue(t, q, nil)
	publishText(t, c, q, "now it exists")
}

func TestDispatchOnType(t *testing.T) {
	t.Parallel()
	type order struct {
		OrderID string `json:"order_id"`
	}
	orders := runtime.NewJSONType[order]("acemq.test.dispatch.order", `{"type":"object","required":["order_id"]}`)
	notes := runtime.NewTextType("acemq.test.dispatch.note")
	q := brokertest.Queue(t, "dispatch")
	rawQueue(t, q, nil)
	c := dial(t)
	gotOrder, gotNote := make(chan string, 2), make(chan string, 2)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(orders, func(_ context.Context, m *runtime.Message[order]) runtime.Ack {
			gotOrder <- m.Payload.OrderID + " " + m.Envelope.Type
			return runtime.Accept()
		}),
		runtime.Handle(notes, func(_ context.Context, m *runtime.Message[string]) runtime.Ack {
			gotNote <- m.Payload + " " + m.Envelope.Type
			return runtime.Accept()
		}),
	}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec)
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close(ctxFor(t, 10*time.Second)) })
	ctx := ctxFor(t, 10*time.Second)
	if err := runtime.Publish(ctx, c, notes, "", "hello", runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Publish(ctx, c, orders, "", order{OrderID: "A-1"}, runtime.WithRoutingKey(q)); err != nil {
		t.Fatal(err)
	}
	for ch, want := range map[chan string]string{gotOrder: "A-1 acemq.test.dispatch.order", gotNote: "hello acemq.test.dispatch.note"} {
		select {
		case got := <-ch:
			if got != want {
				t.Errorf("handler got %q, want %q", got, want)
			}
		case <-time.After(wait):
			t.Fatalf("no handler call for %q", want)
		}
	}
	time.Sleep(settle)
	if len(gotOrder)+len(gotNote) != 0 {
		t.Errorf("a message reached two handlers")
	}
}

func TestConsumeRefusesInvalidPolicy(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "badpolicy")
	rawQueue(t, q, nil)
	c := dial(t)
	tooLong := runtime.Exponential(6, 10*time.Second, time.Hour).WithWaitInBrokerFrom(16 * time.Minute)
	spec := runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(textType,
		func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() })}}
	cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, spec, runtime.WithRetry(tooLong))
	if err == nil {
		_ = cs.Close(ctxFor(t, 5*time.Second))
		t.Fatalf("Consume with wait_in_broker_from 16m = nil error: a delivery held that long risks the consumer timeout")
	}
	if !strings.Contains(err.Error(), "15m") {
		t.Errorf("error %q should say the limit (15m)", err)
	}
}
