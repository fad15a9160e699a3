package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"
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
		msgs := make([]amqp.Publishing, n)
		for i := range msgs {
			msgs[i] = e.rawMessage(format)
		}
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
		start := time.Now()
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
		msgs := make([]amqp.Publishing, n)
		for i := range msgs {
			msgs[i] = e.rawMessage(format)
		}
		start := time.Now()
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

// rawConsume fills the format's queue through the runtime (not timed),
// then consumes it with prefetch 256, acking with multiple=true every 64
// deliveries and at the last.
func rawConsume(format string) runFunc { return rawConsumeAcking(format, 64) }

// rawConsumeAcking is rawConsume acking every ackEvery deliveries (1: each
// on its own, as the runtime does).
func rawConsumeAcking(format string, ackEvery int) runFunc {
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
		start := time.Now()
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
		start := time.Now()
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
		start := time.Now()
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
