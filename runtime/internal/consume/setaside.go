package consume

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// A delivery is set aside by a copy of it published to another queue (a
// dead letter to q.dlq, a park to q.parked, a retry's next attempt to a
// rung or back to its queue) and is acked only once the broker has
// confirmed the copy (rule 1: never an ack before the copy is safe). The
// worker does not wait for the confirm: the copy's outcome is carried out
// by the publisher's drainer, or at the end of the copy's bound
// (sendCopy, copybound.go), and Close waits for it.

// setAsidePause is how long a delivery that could not be decoded for now
// (the consumer is being stopped) waits before it is nacked back to its
// queue: never a hot loop.
var setAsidePause = time.Second

// SetAsideTimeout bounds one republish and its confirm.
const SetAsideTimeout = 30 * time.Second

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

// SetAsideTiming is the backoff and the bound above, per consumer, so that
// tests can shorten them.
type SetAsideTiming struct{ Backoff, BackoffMax, Hold time.Duration }

func (dv *delivery) deadLetter(why string, o obs.Outcome) {
	dv.moveTo(wire.DeadLetterQueue(dv.cs.queue), why, o)
}

func (dv *delivery) park(why string, o obs.Outcome) {
	dv.moveTo(wire.ParkedQueue(dv.cs.queue), why, o)
}

// moveTo publishes a copy of dv to target with the reason and the queue it
// came from, then acks dv, counting o. The attempt count is kept as it was.
func (dv *delivery) moveTo(target, why string, o obs.Outcome) {
	if dv.discarded() {
		return
	}
	h := dv.copyFor(target, dv.env.Attempt, why, dv.cs.queue)
	h.done = func() { dv.setAsideAs(o, why, target) }
	h.publish(context.Background())
}

// copyFor is dv's copy for target on attempt, with the reason why and the
// queue it came from (a dead letter's or a park's), to be published; the
// process span that decided it is the copy's parent.
func (dv *delivery) copyFor(target string, attempt int, why, from string) *heldRetry {
	return &heldRetry{dv: dv, target: target, msg: CopyOf(dv.d, attempt, why, from), trace: trace.SpanContextFromContext(dv.ctx)}
}

// publishCopy sends msg to queue by name through the default exchange,
// mandatory, and waits for the confirm, within ctx and SetAsideTimeout.
// ctx's span (the process span that decided the copy) is the parent of the
// copy's producer span; ctx's cancellation is not followed.
func (cs *Consumer) publishCopy(ctx context.Context, queue string, msg amqp.Publishing) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SetAsideTimeout)
	defer cancel()
	return cs.conn.SetAside(ctx, cs.copyOut(queue, msg))
}

// sendCopy is publishCopy without the wait: it writes the copy and
// returns; o.to gets the outcome (nil once the broker confirmed the copy)
// from the publisher's drainer, or the bound's end (copybound.go).
// cs.copies counts the copy until then has returned, so that Close waits
// for it. o is the copy's own (a heldRetry's), used once.
func (cs *Consumer) sendCopy(ctx context.Context, queue string, msg amqp.Publishing, o *copyOutcome) {
	bound := cs.bounds.bound(time.Now())
	o.cs, o.queue, o.bound = cs, queue, bound
	o.ctx = copyCtx{Context: bound, values: context.WithoutCancel(ctx)}
	cs.copies.add()
	o.stop = context.AfterFunc(bound, o.timedOut)
	_ = cs.conn.PublishThen(&o.ctx, cs.copyOut(queue, msg), o.published, &o.arrived)
}

// copyOut is the publish of a copy of one of cs's deliveries to queue.
// Its origin is read off queue's name without making cs's dead-letter and
// parked queues' names for every copy.
func (cs *Consumer) copyOut(queue string, msg amqp.Publishing) amqpx.Outgoing {
	origin := "retry"
	if rest, ok := strings.CutPrefix(queue, cs.queue); ok {
		switch rest {
		case wire.DeadLetterSuffix:
			origin = "dead_letter"
		case wire.ParkedSuffix:
			origin = "park"
		}
	}
	return amqpx.Outgoing{Key: queue, Mandatory: true, Msg: msg, Origin: origin}
}

// next is the wait before a copy that failed (err) after failures
// failures before is tried again.
func (t SetAsideTiming) next(failures int, err error) time.Duration {
	if errors.Is(err, core.ErrBlocked) {
		// An alarm is cleared by the operator, not by waiting longer: try
		// again at the shortest pause, so the copy goes out as soon as the
		// broker unblocks the connection.
		return t.Backoff
	}
	wait := t.Backoff << min(failures, 16)
	return min(max(wait, t.Backoff), t.BackoffMax)
}

// failed handles a copy that was returned or refused: it is counted
// and tried again after a backoff, the delivery held meanwhile (never an
// ack before the copy is confirmed). Past the hold bound, or when the
// consumer is closing, the delivery is nacked back to its queue, once.
func (h *heldRetry) failed(err error) {
	dv, cs := h.dv, h.dv.cs
	cs.metrics.Add(cs.metrics.SetAsideFailed, cs.queue)
	t := cs.cfg.SetAside
	wait := t.next(h.failures, err)
	since := h.since
	if since.IsZero() {
		since = dv.s.takenAt(dv.d.DeliveryTag)
	}
	held := time.Since(since)
	switch {
	case dv.s.ch.IsClosed():
		// Its session is gone: the delivery can no longer be settled here,
		// and the broker redelivers it.
		cs.log.Warn("acemq: could not set the message aside, and its channel closed; the broker redelivers it", "err", err, "id", dv.d.MessageId, "to", h.target)
	case cs.isClosing() || held+wait > t.Hold:
		cs.log.Error("acemq: could not set the message aside; returning it to its queue", "err", err, "id", dv.d.MessageId, "to", h.target, "held", held.Round(time.Millisecond), "tries", h.failures+1)
		dv.nack("acemq: nack failed; the broker will redeliver")
	default:
		if h.failures == 0 {
			cs.log.Error("acemq: could not set the message aside; holding it and trying again", "err", err, "id", dv.d.MessageId, "to", h.target, "next_in", wait)
		} else {
			cs.log.Debug("acemq: could not set the message aside yet", "err", err, "id", dv.d.MessageId, "to", h.target, "next_in", wait, "tries", h.failures+1)
		}
		cs.hold(&heldRetry{dv: dv, target: h.target, msg: h.msg, done: h.done, unroutable: h.unroutable,
			failures: h.failures + 1, since: since, trace: h.trace}, wait)
	}
}

// CopyOf is d as republished: the body byte for byte, the properties kept,
// the broker's bookkeeping (x-death, x-*-death-*, a quorum queue's
// x-delivery-count) dropped, the envelope updated.
func CopyOf(d amqp.Delivery, attempt int, why, from string) amqp.Publishing {
	h, id := copyHeaders(d, attempt, why, from)
	msgID := d.MessageId
	if msgID == "" && len(id) <= amqpx.MaxShortstr {
		// A forged x-acemq-id longer than a short string stays in the
		// header only: as the message id it would close the connection.
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

// copyHeaders are d's headers as its copy carries them, and the copy's
// x-acemq-id: the broker's bookkeeping dropped, the envelope updated.
func copyHeaders(d amqp.Delivery, attempt int, why, from string) (amqp.Table, string) {
	h := amqp.Table{}
	for k, v := range d.Headers {
		if k == wire.HeaderDeath || k == headerDeliveryCount || k == wire.HeaderUnreadable || strings.HasPrefix(k, wire.HeaderFirstDeathPrefix) || strings.HasPrefix(k, wire.HeaderLastDeathPrefix) {
			continue
		}
		h[k] = v
	}
	id := core.HeaderString(h, wire.HeaderID)
	if id == "" {
		id = d.MessageId
	}
	if id == "" {
		id = core.NewID()
	}
	setString(h, wire.HeaderID, id)
	if core.HeaderTime(h, wire.HeaderFirstSeen).IsZero() {
		h[wire.HeaderFirstSeen] = core.FormatTime(time.Now())
	}
	h[wire.HeaderAttempt] = int64(attempt)
	if why != "" {
		setString(h, wire.HeaderError, core.CapReason(why))
	}
	if from != "" {
		setString(h, wire.HeaderQueue, from)
	}
	return h, id
}

// setString sets h[k] to v, keeping the value h has when it is that string
// already (a retry's id, the same failure's reason again): storing a
// string in a table boxes it anew, one allocation a header a copy.
func setString(h amqp.Table, k, v string) {
	if old, ok := h[k].(string); ok && old == v {
		return
	}
	h[k] = v
}

// publish sends h's copy and acks the original once the broker has
// confirmed it (h.done counted first), without waiting for that: a worker
// that set a message aside is free for the next one while the copy is
// confirmed. A failure holds it again (failed), or goes to
// h.unroutable.
func (h *heldRetry) publish(ctx context.Context) {
	cs := h.dv.cs
	if h.dv.discarded() {
		return
	}
	if h.trace.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, h.trace)
	}
	h.dv.s.copyInFlight(h.dv.d.DeliveryTag)
	h.out.to = h
	cs.sendCopy(ctx, h.target, h.msg, &h.out)
}

// copied carries out the outcome of h's copy: the original settled once
// the copy is confirmed (h.done counted first); a failure holds it again
// (failed), or goes to h.unroutable.
func (h *heldRetry) copied(err error) {
	cs := h.dv.cs
	if err != nil {
		h.dv.s.copyLanded(h.dv.d.DeliveryTag)
	}
	switch {
	case err != nil && cs.letGo.Load():
		// Close has let go of it (its ctx ended): nothing is tried
		// again for a delivery the broker puts back.
		cs.log.Debug("acemq: a copy failed after the consumer was closed; the broker puts the message back", "err", err, "id", h.dv.d.MessageId, "to", h.target)
	case err == nil:
		if h.done != nil {
			h.done()
		}
		h.dv.settle()
	case h.unroutable != nil && errors.Is(err, core.ErrUnroutable):
		h.unroutable()
	default:
		h.failed(err)
	}
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
