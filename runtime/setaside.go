package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
)

// setAsidePause is how long a delivery whose copy could not be published
// waits before it is nacked back to its queue: never a hot loop.
var setAsidePause = time.Second

// setAsideTimeout bounds one republish and its confirm.
const setAsideTimeout = 30 * time.Second

// retry spends the next attempt, or gives up.
func (cs *Consumer) retry(s *session, d amqp.Delivery, env Envelope, why string) {
	p := cs.policy
	if age := p.GiveUpAge(); age > 0 && !env.FirstSeen.IsZero() && time.Since(env.FirstSeen) > age {
		cs.deadLetter(s, d, env, fmt.Sprintf("gave up after %d attempts (older than %s): %s", env.Attempt, age, why))
		return
	}
	if env.Attempt >= p.Attempts() {
		cs.deadLetter(s, d, env, fmt.Sprintf("gave up after %d attempts: %s", env.Attempt, why))
		return
	}
	if cs.requeue {
		if err := s.ch.Nack(d.DeliveryTag, false, true); err != nil {
			cs.log.Warn("acemq: requeue failed", "err", err)
			return
		}
		cs.logRetry(d, env, why, "requeue", 0)
		return
	}
	delay := p.Delay(env.Attempt)
	if p.InBroker(delay) {
		rung := RungQueue(cs.queue, delay)
		err := cs.republish(rung, d, env.Attempt+1, why, "")
		switch {
		case err == nil:
			cs.c.metrics.add(cs.c.metrics.retried, cs.queue, attribute.String("acemq.wait", "broker"))
			cs.logRetry(d, env, why, "broker", delay)
			cs.settle(s, d)
			return
		case errors.Is(err, ErrUnroutable):
			cs.c.metrics.add(cs.c.metrics.rungMissing, cs.queue)
			cs.log.Warn("acemq: rung queue missing; waiting in memory instead (declare the topology)", "rung", rung)
			// A delivery held past the broker's consumer timeout (30m)
			// closes the channel: never hold one longer than the cap.
			delay = min(delay, MaxMemoryThreshold)
		default:
			cs.setAsideFailed(s, d, err)
			return
		}
	} else {
		delay = p.jittered(delay)
	}
	cs.c.metrics.add(cs.c.metrics.retried, cs.queue, attribute.String("acemq.wait", "memory"))
	cs.logRetry(d, env, why, "memory", delay)
	cs.holdInMemory(s, d, env, why, delay)
}

func (cs *Consumer) deadLetter(s *session, d amqp.Delivery, env Envelope, why string) {
	cs.moveTo(s, d, env, DeadLetterQueue(cs.queue), why)
}

func (cs *Consumer) park(s *session, d amqp.Delivery, env Envelope, why string) {
	cs.moveTo(s, d, env, ParkedQueue(cs.queue), why)
}

// moveTo publishes a copy of d to target with the reason and the queue it
// came from, then acks d. The attempt count is kept as it was.
func (cs *Consumer) moveTo(s *session, d amqp.Delivery, env Envelope, target, why string) {
	if err := cs.republish(target, d, env.Attempt, why, cs.queue); err != nil {
		cs.setAsideFailed(s, d, err)
		return
	}
	if target == DeadLetterQueue(cs.queue) {
		cs.c.metrics.add(cs.c.metrics.deadLettered, cs.queue)
		cs.log.Warn("acemq: dead-lettered", cs.outcomeAttrs(d, env, why, "to", target)...)
	} else {
		cs.c.metrics.add(cs.c.metrics.parked, cs.queue)
		cs.log.Warn("acemq: parked", cs.outcomeAttrs(d, env, why, "to", target)...)
	}
	cs.settle(s, d)
}

// republish sends a copy of d to queue by name through the default
// exchange, mandatory, and waits for the confirm.
func (cs *Consumer) republish(queue string, d amqp.Delivery, attempt int, why, from string) error {
	ctx, cancel := context.WithTimeout(context.Background(), setAsideTimeout)
	defer cancel()
	return cs.c.setAside(ctx, outgoing{key: queue, mandatory: true, msg: copyOf(d, attempt, why, from)})
}

// setAsideFailed handles a copy that was returned or refused: the original
// goes back to its queue after a pause, and the failure is counted.
func (cs *Consumer) setAsideFailed(s *session, d amqp.Delivery, err error) {
	cs.c.metrics.add(cs.c.metrics.setAsideFailed, cs.queue)
	cs.log.Error("acemq: could not set the message aside; returning it to its queue", "err", err, "id", d.MessageId)
	cs.returnLater(s, d)
}

// returnLater nacks d back to its queue after a pause: never a hot loop.
// The worker is free meanwhile; the delivery keeps its prefetch slot.
func (cs *Consumer) returnLater(s *session, d amqp.Delivery) {
	time.AfterFunc(setAsidePause, func() {
		if err := s.ch.Nack(d.DeliveryTag, false, true); err != nil {
			cs.log.Warn("acemq: nack failed; the broker will redeliver", "err", err)
		}
	})
}

// copyOf is d as republished: the body byte for byte, the properties kept,
// the broker's x-death bookkeeping dropped, the envelope updated.
func copyOf(d amqp.Delivery, attempt int, why, from string) amqp.Publishing {
	h := amqp.Table{}
	for k, v := range d.Headers {
		if k == "x-death" || strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-") {
			continue
		}
		h[k] = v
	}
	id := headerString(h, HeaderID)
	if id == "" {
		id = d.MessageId
	}
	if id == "" {
		id = newID()
	}
	h[HeaderID] = id
	if headerTime(h, HeaderFirstSeen).IsZero() {
		h[HeaderFirstSeen] = formatTime(time.Now())
	}
	h[HeaderAttempt] = int64(attempt)
	if why != "" {
		h[HeaderError] = capReason(why)
	}
	if from != "" {
		h[HeaderQueue] = from
	}
	msgID := d.MessageId
	if msgID == "" {
		msgID = id
	}
	return amqp.Publishing{
		Headers:         h,
		ContentType:     d.ContentType,
		ContentEncoding: d.ContentEncoding,
		DeliveryMode:    amqp.Persistent,
		Priority:        d.Priority,
		CorrelationId:   d.CorrelationId,
		ReplyTo:         d.ReplyTo,
		MessageId:       msgID,
		Timestamp:       d.Timestamp,
		Type:            d.Type,
		AppId:           d.AppId,
		Body:            d.Body,
	}
}

// heldRetry is a delivery waiting in memory for its next attempt. It keeps
// its prefetch slot; the worker that handled it is free.
type heldRetry struct {
	s       *session
	d       amqp.Delivery
	attempt int // the attempt the republished copy carries
	why     string
	timer   *time.Timer
	once    sync.Once
}

// claim makes sure a held retry is settled once, by the timer, Close or
// the loss of its session.
func (h *heldRetry) claim() bool {
	won := false
	h.once.Do(func() { won = true })
	return won
}

func (cs *Consumer) holdInMemory(s *session, d amqp.Delivery, env Envelope, why string, delay time.Duration) {
	h := &heldRetry{s: s, d: d, attempt: env.Attempt + 1, why: why}
	cs.mu.Lock()
	if cs.closing {
		cs.mu.Unlock()
		cs.release(h)
		return
	}
	cs.held[h] = struct{}{}
	cs.releasing.Add(1)
	h.timer = time.AfterFunc(delay, func() {
		defer cs.releasing.Done()
		if h.claim() {
			cs.forgetHeld(h)
			cs.republishHeld(h)
		}
	})
	cs.mu.Unlock()
}

func (cs *Consumer) release(h *heldRetry) {
	if h.claim() {
		cs.republishHeld(h)
	}
}

func (cs *Consumer) republishHeld(h *heldRetry) {
	if err := cs.republish(cs.queue, h.d, h.attempt, h.why, ""); err != nil {
		cs.setAsideFailed(h.s, h.d, err)
		return
	}
	cs.settle(h.s, h.d)
}

func (cs *Consumer) forgetHeld(h *heldRetry) {
	cs.mu.Lock()
	delete(cs.held, h)
	cs.mu.Unlock()
}

func (cs *Consumer) takeHeld(match func(*heldRetry) bool) []*heldRetry {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*heldRetry
	for h := range cs.held {
		if match(h) {
			out = append(out, h)
			delete(cs.held, h)
		}
	}
	return out
}

// flushHeld republishes every held retry now, attempt advanced (rule 4).
func (cs *Consumer) flushHeld(ctx context.Context) {
	var wg sync.WaitGroup
	for _, h := range cs.takeHeld(func(*heldRetry) bool { return true }) {
		if h.timer.Stop() {
			cs.releasing.Done()
		}
		wg.Add(1)
		go func() { defer wg.Done(); cs.release(h) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// dropHeld forgets the held retries of a dead session: their deliveries
// can no longer be acked, and the broker redelivers them.
func (cs *Consumer) dropHeld(s *session) {
	for _, h := range cs.takeHeld(func(h *heldRetry) bool { return h.s == s }) {
		if h.timer.Stop() {
			cs.releasing.Done()
		}
		h.claim()
	}
}

// waitReleases waits, bounded by ctx, for held retries whose timer had
// already fired and that are being republished.
func (cs *Consumer) waitReleases(ctx context.Context) {
	done := make(chan struct{})
	go func() { cs.releasing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
