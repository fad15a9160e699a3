package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// setAsidePause is how long a delivery that could not be decoded for now
// (the consumer is being stopped) waits before it is nacked back to its
// queue: never a hot loop.
var setAsidePause = time.Second

// setAsideTimeout bounds one republish and its confirm.
const setAsideTimeout = 30 * time.Second

// A copy that could not be published (returned: the target queue is
// missing; refused; no confirm) is tried again on a timer, the delivery
// held meanwhile: nacking it back would spend one of a quorum queue's
// deliveries every time. The waits double from setAsideBackoff to
// setAsideBackoffMax. A delivery is held at most setAsideHold from when the
// consumer took it, inside the broker's consumer timeout (30m by default,
// after which the broker closes the channel and returns every unacked
// delivery on it); then it is nacked back to its queue, once.
const (
	setAsideBackoff    = time.Second
	setAsideBackoffMax = 30 * time.Second
	setAsideHold       = 25 * time.Minute
)

// setAsideTiming is the backoff and the bound above, per consumer, so that
// tests can shorten them.
type setAsideTiming struct{ backoff, backoffMax, hold time.Duration }

// retry spends the next attempt, or gives up.
func (cs *Consumer) retry(ctx context.Context, s *session, d amqp.Delivery, env Envelope, why string) {
	if cs.discarded(s, d) {
		return
	}
	p := cs.policy
	if age := p.GiveUpAge(); age > 0 && !env.FirstSeen.IsZero() && time.Since(env.FirstSeen) > age {
		cs.deadLetter(ctx, s, d, env, fmt.Sprintf("gave up after %d attempts (older than %s): %s", env.Attempt, age, why), outcomeGaveUp)
		return
	}
	if env.Attempt >= p.Attempts() {
		cs.deadLetter(ctx, s, d, env, fmt.Sprintf("gave up after %d attempts: %s", env.Attempt, why), outcomeDeadLettered)
		return
	}
	if cs.requeue {
		cs.requeues.add(requeueKey(d, env))
		if cs.nack(s, d, "acemq: requeue failed") {
			cs.settledAs(d, outcomeRetried, "requeue")
			cs.logRetry(d, env, why, "requeue", 0)
		}
		return
	}
	delay := p.Delay(env.Attempt)
	switch {
	case p.InBroker(delay):
		// Without its rung the retry waits in memory, but never longer
		// than the cap: a delivery held past the broker's consumer
		// timeout (30m) closes the channel.
		cs.toRung(ctx, s, d, env, why, delay, false, min(delay, MaxMemoryThreshold))
	case s.reserveHold(d.DeliveryTag, cs.cfg.holdBudget) || !p.spills(delay):
		// Held in a budget slot; or past the budget under a policy
		// that never uses the broker, in a handler's slot.
		cs.waitInMemory(s, d, env, why, p.jittered(delay), trace.SpanContextFromContext(ctx))
	default:
		// The hold budget is full: spill the wait to the broker rather
		// than keep one of the handlers' slots (docs/performance.md, R1).
		cs.toRung(ctx, s, d, env, why, spillRung(delay), true, p.jittered(delay))
	}
}

// waitInMemory holds d's next attempt in memory for delay: a copy
// published to the queue when the timer fires, d acked once it is
// confirmed. sc is the process span that decided the retry.
func (cs *Consumer) waitInMemory(s *session, d amqp.Delivery, env Envelope, why string, delay time.Duration, sc trace.SpanContext) {
	cs.settledAs(d, outcomeRetried, "memory")
	cs.logRetry(d, env, why, "memory", delay)
	cs.hold(&heldRetry{s: s, d: d, target: cs.queue, msg: copyOf(d, env.Attempt+1, why, ""), trace: sc}, delay)
}

// toRung sends d's next attempt to the rung for delay, and acks d once
// the broker has confirmed the copy; the worker does not wait for that
// (docs/performance.md, R1). When the rung is missing the retry waits in
// memory for fallback instead. spilled is a wait below the threshold sent
// to the broker because the hold budget is full.
func (cs *Consumer) toRung(ctx context.Context, s *session, d amqp.Delivery, env Envelope, why string, delay time.Duration, spilled bool, fallback time.Duration) {
	rung := RungQueue(cs.queue, delay)
	sc := trace.SpanContextFromContext(ctx)
	h := &heldRetry{s: s, d: d, target: rung, msg: copyOf(d, env.Attempt+1, why, ""), trace: sc}
	h.done = func() {
		if spilled {
			cs.c.metrics.add(cs.c.metrics.retrySpilled, cs.queue)
		}
		cs.settledAs(d, outcomeRetried, "broker")
		cs.logRetry(d, env, why, "broker", delay)
	}
	h.unroutable = func() {
		cs.c.metrics.add(cs.c.metrics.rungMissing, cs.queue)
		cs.log.Warn("acemq: rung queue missing; waiting in memory instead (declare the topology)", "rung", rung)
		cs.waitInMemory(s, d, env, why, fallback, sc)
	}
	cs.publishHeld(ctx, h)
}

func (cs *Consumer) deadLetter(ctx context.Context, s *session, d amqp.Delivery, env Envelope, why string, o outcome) {
	cs.moveTo(ctx, s, d, env, DeadLetterQueue(cs.queue), why, o)
}

func (cs *Consumer) park(ctx context.Context, s *session, d amqp.Delivery, env Envelope, why string, o outcome) {
	cs.moveTo(ctx, s, d, env, ParkedQueue(cs.queue), why, o)
}

// moveTo publishes a copy of d to target with the reason and the queue it
// came from, then acks d, counting o. The attempt count is kept as it was.
func (cs *Consumer) moveTo(ctx context.Context, s *session, d amqp.Delivery, env Envelope, target, why string, o outcome) {
	if cs.discarded(s, d) {
		return
	}
	what := "acemq: parked"
	if target == DeadLetterQueue(cs.queue) {
		what = "acemq: dead-lettered"
	}
	done := func() {
		cs.settledAs(d, o, "")
		cs.log.Warn(what, cs.outcomeAttrs(d, env, why, "to", target)...)
	}
	cs.publishHeld(context.Background(), &heldRetry{s: s, d: d, target: target, msg: copyOf(d, env.Attempt, why, cs.queue), done: done,
		trace: trace.SpanContextFromContext(ctx)})
}

// discarded reports (and logs) a delivery of a dead session, or one whose
// consumer Close let go of: what its handler decided is not carried out,
// since its ack can no longer reach the broker, which redelivers the
// message (to the next session, or when the closed consumer's channel
// closes) anyway.
func (cs *Consumer) discarded(s *session, d amqp.Delivery) bool {
	switch {
	case s.dead.Load():
		cs.log.Debug("acemq: the session of this delivery died; its settlement is discarded (the broker redelivers it)", "id", d.MessageId)
	case cs.letGo.Load():
		cs.log.Debug("acemq: the consumer was closed before this delivery was set aside; its settlement is discarded (the broker redelivers it)", "id", d.MessageId)
	default:
		return false
	}
	return true
}

// publishCopy sends msg to queue by name through the default exchange,
// mandatory, and waits for the confirm, within ctx and setAsideTimeout.
// ctx's span (the process span that decided the copy) is the parent of the
// copy's producer span; ctx's cancellation is not followed.
func (cs *Consumer) publishCopy(ctx context.Context, queue string, msg amqp.Publishing) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), setAsideTimeout)
	defer cancel()
	return cs.c.setAside(ctx, cs.copyOut(queue, msg))
}

// sendCopy is publishCopy without the wait: it writes the copy and
// returns, and then gets the outcome (nil once the broker confirmed the
// copy) on a goroutine of its own. cs.copies counts the copy until then
// has returned, so that Close waits for it.
func (cs *Consumer) sendCopy(ctx context.Context, queue string, msg amqp.Publishing, then func(error)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), setAsideTimeout)
	cs.copies.add()
	pd, err := cs.c.publishAsync(ctx, true, cs.copyOut(queue, msg))
	go func() {
		defer cs.copies.done()
		defer cancel()
		if err == nil {
			err = pd.Wait(ctx)
		}
		if g := cs.cfg.copyGate; g != nil {
			<-g
		}
		then(err)
	}()
}

// copyOut is the publish of a copy of one of cs's deliveries to queue.
func (cs *Consumer) copyOut(queue string, msg amqp.Publishing) outgoing {
	origin := "retry"
	switch queue {
	case DeadLetterQueue(cs.queue):
		origin = "dead_letter"
	case ParkedQueue(cs.queue):
		origin = "park"
	}
	return outgoing{key: queue, mandatory: true, msg: msg, origin: origin}
}

// setAsideFailed handles a copy that was returned or refused: it is counted
// and tried again after a backoff, the delivery held meanwhile (never an
// ack before the copy is confirmed). Past the hold bound, or when the
// consumer is closing, the delivery is nacked back to its queue, once.
func (cs *Consumer) setAsideFailed(h *heldRetry, err error) {
	cs.c.metrics.add(cs.c.metrics.setAsideFailed, cs.queue)
	t := cs.cfg.setAside
	wait := t.backoff << min(h.failures, 16)
	wait = min(max(wait, t.backoff), t.backoffMax)
	if errors.Is(err, ErrBlocked) {
		// An alarm is cleared by the operator, not by waiting longer: try
		// again at the shortest pause, so the copy goes out as soon as the
		// broker unblocks the connection.
		wait = t.backoff
	}
	since := h.since
	if since.IsZero() {
		since = h.s.takenAt(h.d.DeliveryTag)
	}
	held := time.Since(since)
	switch {
	case h.s.ch.IsClosed():
		// Its session is gone: the delivery can no longer be settled here,
		// and the broker redelivers it.
		cs.log.Warn("acemq: could not set the message aside, and its channel closed; the broker redelivers it", "err", err, "id", h.d.MessageId, "to", h.target)
	case cs.isClosing() || held+wait > t.hold:
		cs.log.Error("acemq: could not set the message aside; returning it to its queue", "err", err, "id", h.d.MessageId, "to", h.target, "held", held.Round(time.Millisecond), "tries", h.failures+1)
		cs.nack(h.s, h.d, "acemq: nack failed; the broker will redeliver")
	default:
		if h.failures == 0 {
			cs.log.Error("acemq: could not set the message aside; holding it and trying again", "err", err, "id", h.d.MessageId, "to", h.target, "next_in", wait)
		} else {
			cs.log.Debug("acemq: could not set the message aside yet", "err", err, "id", h.d.MessageId, "to", h.target, "next_in", wait, "tries", h.failures+1)
		}
		cs.hold(&heldRetry{s: h.s, d: h.d, target: h.target, msg: h.msg, done: h.done, unroutable: h.unroutable,
			failures: h.failures + 1, since: since, trace: h.trace}, wait)
	}
}

// returnLater nacks d back to its queue after a pause: never a hot loop.
// The worker is free meanwhile; the delivery keeps its prefetch slot.
func (cs *Consumer) returnLater(s *session, d amqp.Delivery) {
	time.AfterFunc(setAsidePause, func() { cs.nack(s, d, "acemq: nack failed; the broker will redeliver") })
}

// nack puts d back on its queue (a quorum queue counts it as a delivery),
// logging failed when the nack cannot be sent.
func (cs *Consumer) nack(s *session, d amqp.Delivery, failed string) bool {
	if err := s.nackTag(d.DeliveryTag); err != nil {
		cs.log.Warn(failed, "err", err, "id", d.MessageId)
		return false
	}
	return true
}

// copyOf is d as republished: the body byte for byte, the properties kept,
// the broker's bookkeeping (x-death, x-*-death-*, a quorum queue's
// x-delivery-count) dropped, the envelope updated.
func copyOf(d amqp.Delivery, attempt int, why, from string) amqp.Publishing {
	h := amqp.Table{}
	for k, v := range d.Headers {
		if k == "x-death" || k == headerDeliveryCount || strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-") {
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

// heldRetry is a delivery kept unsettled while its copy waits on a timer:
// a retry waiting in memory for its delay (failures 0), or a copy that
// could not be published, tried again after a backoff. It keeps its
// prefetch slot; the worker that handled it is free.
type heldRetry struct {
	s      *session
	d      amqp.Delivery
	target string          // the queue the copy goes to
	msg    amqp.Publishing // the copy
	done   func()          // counts the outcome once the copy is confirmed; may be nil
	// unroutable, when set, takes a copy that no queue took (a missing
	// rung) instead of trying it again.
	unroutable func()
	trace      trace.SpanContext // the process span that decided the copy
	failures   int               // publishes of the copy that failed so far
	since      time.Time         // when the consumer took d, once a copy failed
	timer      *time.Timer
	once       sync.Once
}

// claim makes sure a held retry is settled once, by the timer, Close or
// the loss of its session.
func (h *heldRetry) claim() bool {
	won := false
	h.once.Do(func() { won = true })
	return won
}

// hold publishes h's copy after delay, or at once when the consumer is
// closing (rule 4: no count is lost).
func (cs *Consumer) hold(h *heldRetry, delay time.Duration) {
	cs.mu.Lock()
	if h.s.dead.Load() {
		// The session died while the handler ran: dropHeld has been, so
		// nothing would drop this one. The broker redelivers the message.
		cs.mu.Unlock()
		return
	}
	if cs.closing {
		cs.mu.Unlock()
		cs.release(context.Background(), h)
		return
	}
	cs.held[h] = struct{}{}
	cs.releasing.Add(1)
	h.timer = time.AfterFunc(delay, func() {
		defer cs.releasing.Done()
		if h.claim() {
			cs.forgetHeld(h)
			cs.publishHeld(context.Background(), h)
		}
	})
	cs.mu.Unlock()
}

func (cs *Consumer) release(ctx context.Context, h *heldRetry) {
	if h.claim() {
		cs.publishHeld(ctx, h)
	}
}

// publishHeld sends h's copy and acks the original once the broker has
// confirmed it (h.done counted first), without waiting for that: a worker
// that set a message aside is free for the next one while the copy is
// confirmed. A failure holds it again (setAsideFailed), or goes to
// h.unroutable.
func (cs *Consumer) publishHeld(ctx context.Context, h *heldRetry) {
	if cs.discarded(h.s, h.d) {
		return
	}
	if h.trace.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, h.trace)
	}
	cs.sendCopy(ctx, h.target, h.msg, func(err error) {
		switch {
		case err != nil && cs.letGo.Load():
			// Close has let go of it (its ctx ended): nothing is tried
			// again for a delivery the broker puts back.
			cs.log.Debug("acemq: a copy failed after the consumer was closed; the broker puts the message back", "err", err, "id", h.d.MessageId, "to", h.target)
		case err == nil:
			if h.done != nil {
				h.done()
			}
			cs.settle(h.s, h.d)
		case h.unroutable != nil && errors.Is(err, ErrUnroutable):
			h.unroutable()
		default:
			cs.setAsideFailed(h, err)
		}
	})
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

// flushHeld republishes every held retry now, attempt advanced (rule 4),
// within ctx. Once ctx has ended they are left unsettled instead: the
// broker redelivers them when the channel closes.
func (cs *Consumer) flushHeld(ctx context.Context) {
	var wg sync.WaitGroup
	for _, h := range cs.takeHeld(func(*heldRetry) bool { return true }) {
		if h.timer.Stop() {
			cs.releasing.Done()
		}
		if ctx.Err() != nil {
			h.claim()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); cs.release(ctx, h) }()
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
// already fired and that are being republished, then for every copy
// written and not settled yet (sendCopy). It returns an error wrapping
// ctx's when ctx ended first.
func (cs *Consumer) waitReleases(ctx context.Context) error {
	done := make(chan struct{})
	go func() { cs.releasing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("republishing held retries: %w", ctx.Err())
	}
	if n := cs.copies.wait(ctx); n > 0 {
		return fmt.Errorf("copies still waiting for their confirm: %d: %w", n, ctx.Err())
	}
	return nil
}

// copyCount counts copies written whose outcome has not been carried out
// yet; unlike a WaitGroup it may be added to while someone waits.
type copyCount struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (c *copyCount) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *copyCount) done() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
	c.mu.Unlock()
}

// pending is how many copies are counted now.
func (c *copyCount) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns 0 once no copy is counted, or how many still are when ctx
// ends first.
func (c *copyCount) wait(ctx context.Context) int {
	for {
		c.mu.Lock()
		if c.n == 0 {
			c.mu.Unlock()
			return 0
		}
		if c.idle == nil {
			c.idle = make(chan struct{})
		}
		idle := c.idle
		c.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return c.pending()
		}
	}
}
