package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/acemq/acemq-go/bench/orders"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rawChannel opens a channel in confirm mode on the raw connection.
func (e *env) rawChannel() (*amqp.Channel, error) {
	ch, err := e.raw.Channel()
	if err != nil {
		return nil, fmt.Errorf("raw channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("raw confirm mode: %w", err)
	}
	return ch, nil
}

// rawPublishWindow is amqp091-go's pipelined publish: one channel in
// confirm mode, at most window unconfirmed messages (DeferredConfirmation,
// oldest waited for first), the same mandatory message the runtime sends.
func rawPublishWindow(format string, window int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		ch, err := e.rawChannel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		msgs := e.rawMessages(format, n)
		pending := make([]*amqp.DeferredConfirmation, 0, window)
		wait := func(dc *amqp.DeferredConfirmation) error {
			ok, err := dc.WaitContext(ctx)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("raw publish: nacked (delivery tag %d)", dc.DeliveryTag)
			}
			return nil
		}
		start := e.clockStart()
		for i := range n {
			if len(pending) == window {
				if err := wait(pending[0]); err != nil {
					return 0, 0, err
				}
				pending = pending[1:]
			}
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "bench", routingKey(format), true, false, msgs[i])
			if err != nil {
				return 0, 0, fmt.Errorf("raw publish: %w", err)
			}
			pending = append(pending, dc)
		}
		for _, dc := range pending {
			if err := wait(dc); err != nil {
				return 0, 0, err
			}
		}
		return time.Since(start), n, nil
	}
}

// rawPublishWaitEach publishes one message and waits for its confirm
// before the next.
func rawPublishWaitEach(format string) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		ch, err := e.rawChannel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		msgs := e.rawMessages(format, n)
		start := e.clockStart()
		for i := range n {
			dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "bench", routingKey(format), true, false, msgs[i])
			if err != nil {
				return 0, 0, fmt.Errorf("raw publish: %w", err)
			}
			if ok, err := dc.WaitContext(ctx); err != nil || !ok {
				return 0, 0, fmt.Errorf("raw publish: confirm %v, %v", ok, err)
			}
		}
		return time.Since(start), n, nil
	}
}

// rawPublishBatches is amqp091-go publishing batch messages (prebuilt) on
// one channel in confirm mode, then waiting for every confirm of the batch
// before the next: PublishBatch's shape without its encoding, the most any
// library over amqp091-go can do with batches of that size (P1-avro-all).
func rawPublishBatches(format string, batch int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		ch, err := e.rawChannel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		msgs := e.rawMessages(format, n)
		dcs := make([]*amqp.DeferredConfirmation, 0, batch)
		start := e.clockStart()
		for done := 0; done < n; done += batch {
			dcs = dcs[:0]
			for i := done; i < min(done+batch, n); i++ {
				dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "bench", routingKey(format), true, false, msgs[i])
				if err != nil {
					return 0, 0, fmt.Errorf("raw publish: %w", err)
				}
				dcs = append(dcs, dc)
			}
			for _, dc := range dcs {
				if ok, err := dc.WaitContext(ctx); err != nil || !ok {
					return 0, 0, fmt.Errorf("raw publish: confirm %v, %v", ok, err)
				}
			}
		}
		return time.Since(start), n, nil
	}
}

// rawPublishCallers is amqp091-go from g goroutines sharing one channel in
// confirm mode, each publishing and then waiting for its own
// DeferredConfirmation: at most g publishes in flight, so the most any
// library over amqp091-go can do with g synchronous callers (P2, X1-publish).
func rawPublishCallers(format string, g int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		ch, err := e.rawChannel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		msgs := e.rawMessages(format, n)
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, g)
		start := e.clockStart()
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
					dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "bench", routingKey(format), true, false, msgs[i])
					if err != nil {
						errs <- fmt.Errorf("raw publish: %w", err)
						return
					}
					if ok, err := dc.WaitContext(ctx); err != nil || !ok {
						errs <- fmt.Errorf("raw publish: confirm %v, %v", ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			return 0, 0, err
		}
		return d, n, nil
	}
}

// rawConsume fills the format's queue through the runtime (not timed),
// then consumes it with prefetch 256, acking with multiple=true every 64
// deliveries and at the last.
func rawConsume(format string) runFunc { return rawConsumeAcking(format, 64) }

// rawConsumeAcking is rawConsume acking every ackEvery deliveries (1: each
// on its own, as the runtime does).
func rawConsumeAcking(format string, ackEvery int) runFunc {
	return rawConsumeWith(format, ackEvery, nil)
}

// rawConsumeDecoding is rawConsume unmarshalling each JSON body into the
// generated payload type with encoding/json, as a hand-written consumer
// does (no schema check): what decoding costs a raw client.
func rawConsumeDecoding() runFunc {
	return rawConsumeWith("json", 64, func(body []byte) error {
		var o orders.OrderJSON
		return json.Unmarshal(body, &o)
	})
}

// rawConsumeWith is rawConsumeAcking calling decode (when set) on each
// body before it counts.
func rawConsumeWith(format string, ackEvery int, decode func([]byte) error) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		q := e.queueOf(format)
		if err := e.fill(ctx, format, n); err != nil {
			return 0, 0, err
		}
		ch, err := e.raw.Channel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		if err := ch.Qos(256, 0, false); err != nil {
			return 0, 0, err
		}
		start := e.clockStart()
		ds, err := ch.ConsumeWithContext(ctx, q, "acemqbench-raw", false, false, false, false, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("raw consume %s: %w", q, err)
		}
		got := 0
		for got < n {
			select {
			case d, ok := <-ds:
				if !ok {
					return 0, 0, fmt.Errorf("raw consume %s: deliveries closed after %d", q, got)
				}
				if decode != nil {
					if err := decode(d.Body); err != nil {
						return 0, 0, fmt.Errorf("raw consume %s: decode: %w", q, err)
					}
				}
				got++
				if got%ackEvery == 0 || got == n {
					if err := d.Ack(ackEvery > 1); err != nil {
						return 0, 0, err
					}
				}
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("raw consume %s: %d of %d: %w", q, got, n, ctx.Err())
			}
		}
		d := time.Since(start)
		_ = ch.Cancel("acemqbench-raw", false)
		return d, n, nil
	}
}

// watermillConfig is watermill-amqp's NewDurableQueueConfig, as its docs
// recommend for a work queue.
func watermillConfig(url string) wamqp.Config { return wamqp.NewDurableQueueConfig(url) }

// watermillPublish publishes n messages of the JSON body with watermill's
// Publisher from g goroutines, with or without ConfirmDelivery.
func watermillPublish(confirm bool, g int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		cfg := watermillConfig(e.url)
		cfg.Publish.ConfirmDelivery = confirm
		p, err := wamqp.NewPublisher(cfg, watermill.NopLogger{})
		if err != nil {
			return 0, 0, fmt.Errorf("watermill publisher: %w", err)
		}
		defer p.Close()
		body := e.wire["json"].Body
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, g)
		start := e.clockStart()
		for range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					if err := p.Publish(queueWatermill, message.NewMessage(watermill.NewUUID(), body)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		close(errs)
		if err := <-errs; err != nil {
			return 0, 0, fmt.Errorf("watermill publish: %w", err)
		}
		return d, n, nil
	}
}

// watermillConsume fills watermill's queue with its own publisher (not
// timed), then consumes and acks it with its Subscriber at prefetch.
func watermillConsume(prefetch int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		if _, _, err := watermillPublish(true, 32)(ctx, e, n); err != nil {
			return 0, 0, err
		}
		cfg := watermillConfig(e.url)
		cfg.Consume.Qos.PrefetchCount = prefetch
		s, err := wamqp.NewSubscriber(cfg, watermill.NopLogger{})
		if err != nil {
			return 0, 0, fmt.Errorf("watermill subscriber: %w", err)
		}
		defer s.Close()
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		start := e.clockStart()
		msgs, err := s.Subscribe(sctx, queueWatermill)
		if err != nil {
			return 0, 0, fmt.Errorf("watermill subscribe: %w", err)
		}
		for got := 0; got < n; {
			select {
			case m, ok := <-msgs:
				if !ok {
					return 0, 0, fmt.Errorf("watermill consume: closed after %d", got)
				}
				m.Ack()
				got++
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("watermill consume: %d of %d: %w", got, n, ctx.Err())
			}
		}
		return time.Since(start), n, nil
	}
}

// rawRetrying is R1 done by hand on raw amqp091-go, as cheaply as the
// broker allows, to bound what any library can reach: n messages fill the
// R1 queue, failPct percent of them marked to fail twice; a failing
// delivery is acked at once and its copy published after 500ms to the queue
// (the memory wait), then through the 1s rung (the broker wait), the third
// attempt passing. The copies go out without confirms and the originals
// are acked before them, with multiple acks every 64: unsafe (a crash
// loses the retry), so no safe library can do the same retries with less
// broker work. It times the healthy deliveries as typedRetrying does.
// The headers of R1's raw sides: a message that fails, and its attempt.
const failHeader, attemptHeader = "x-bench-fail", "x-bench-attempt"

// r1Channels are R1's raw sides' two channels: out for the copies (in
// confirm mode when confirmed) and ch, prefetch 256, to consume on.
func (e *env) r1Channels(confirmed bool) (out, ch *amqp.Channel, err error) {
	if confirmed {
		out, err = e.rawChannel()
	} else {
		out, err = e.raw.Channel()
	}
	if err != nil {
		return nil, nil, err
	}
	if ch, err = e.raw.Channel(); err == nil {
		err = ch.Qos(256, 0, false)
	}
	if err != nil {
		if ch != nil {
			_ = ch.Close()
		}
		_ = out.Close()
		return nil, nil, err
	}
	return out, ch, nil
}

// rawRetryFill puts n messages on R1's queue, every (100/failPct)th one
// marked to fail (failPct 0: none), in confirmed windows of 256, and
// returns how many are marked.
func rawRetryFill(ctx context.Context, e *env, n, failPct int) (int, error) {
	pub, err := e.rawChannel()
	if err != nil {
		return 0, err
	}
	defer pub.Close()
	failing := 0
	for i := 0; i < n; i += 256 {
		var dcs []*amqp.DeferredConfirmation
		for j := i; j < min(i+256, n); j++ {
			m := e.rawMessage("avro")
			if failPct > 0 && j%(100/failPct) == 0 {
				m.Headers[failHeader] = true
				failing++
			}
			dc, err := pub.PublishWithDeferredConfirmWithContext(ctx, "bench", "r1", true, false, m)
			if err != nil {
				return 0, fmt.Errorf("raw fill: %w", err)
			}
			dcs = append(dcs, dc)
		}
		for _, dc := range dcs {
			if ok, err := dc.WaitContext(ctx); err != nil || !ok {
				return 0, fmt.Errorf("raw fill: confirm %v, %v", ok, err)
			}
		}
	}
	return failing, nil
}

func rawRetrying(failPct int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		failing, err := rawRetryFill(ctx, e, n, failPct)
		if err != nil {
			return 0, 0, err
		}
		out, ch, err := e.r1Channels(false) // the copies without confirms
		if err != nil {
			return 0, 0, err
		}
		defer out.Close()
		defer ch.Close()
		healthy := n - failing
		var timers sync.WaitGroup
		defer timers.Wait()
		start := e.clockStart()
		ds, err := ch.ConsumeWithContext(ctx, queueR1, "acemqbench-raw-r1", false, false, false, false, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("raw consume %s: %w", queueR1, err)
		}
		defer func() { _ = ch.Cancel("acemqbench-raw-r1", false) }()
		seen, unacked := 0, 0
		for seen < healthy {
			var d amqp.Delivery
			select {
			case d = <-ds:
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("raw consume %s: %d of %d healthy: %w", queueR1, seen, healthy, ctx.Err())
			}
			attempt, _ := d.Headers[attemptHeader].(int32)
			if _, fail := d.Headers[failHeader]; fail && attempt < 2 {
				copyOf := amqp.Publishing{Headers: amqp.Table{failHeader: true, attemptHeader: attempt + 1},
					ContentType: d.ContentType, DeliveryMode: amqp.Persistent, MessageId: d.MessageId, Type: d.Type, Body: d.Body}
				if attempt == 0 {
					timers.Add(1)
					time.AfterFunc(500*time.Millisecond, func() {
						defer timers.Done()
						_ = out.Publish("", queueR1, false, false, copyOf)
					})
				} else if err := out.Publish("", wire.RungQueue(queueR1, time.Second), false, false, copyOf); err != nil {
					return 0, 0, err
				}
			} else if !fail {
				seen++
			}
			if unacked++; unacked == 64 || seen == healthy {
				if err := d.Ack(true); err != nil {
					return 0, 0, err
				}
				unacked = 0
			}
		}
		return time.Since(start), healthy, nil
	}
}

// rawConsumeHolding is rawConsumeAcking(format, 1) keeping hold deliveries
// unacked (every tenth of the first ones) until the end, as held retries
// are: prefetch 256 + hold, so the others have the same window.
func rawConsumeHolding(format string, hold int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		q := e.queueOf(format)
		if err := e.fill(ctx, format, n); err != nil {
			return 0, 0, err
		}
		ch, err := e.raw.Channel()
		if err != nil {
			return 0, 0, err
		}
		defer ch.Close()
		if err := ch.Qos(256+hold, 0, false); err != nil {
			return 0, 0, err
		}
		start := e.clockStart()
		ds, err := ch.ConsumeWithContext(ctx, q, "acemqbench-raw-hold", false, false, false, false, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("raw consume %s: %w", q, err)
		}
		var held []uint64
		for got := 1; got <= n; got++ {
			var d amqp.Delivery
			select {
			case d = <-ds:
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("raw consume %s: %d of %d: %w", q, got-1, n, ctx.Err())
			}
			if len(held) < hold && got%10 == 0 {
				held = append(held, d.DeliveryTag)
				continue
			}
			if err := d.Ack(false); err != nil {
				return 0, 0, err
			}
		}
		took := time.Since(start)
		for _, tag := range held {
			if err := ch.Ack(tag, false); err != nil {
				return 0, 0, err
			}
		}
		_ = ch.Cancel("acemqbench-raw-hold", false)
		return took, n, nil
	}
}

// rawMessages is n prebuilt messages of format, as the raw publish
// baselines send them.
func (e *env) rawMessages(format string, n int) []amqp.Publishing {
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = e.rawMessage(format)
	}
	return msgs
}
