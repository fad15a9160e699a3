package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// handle runs one delivery through its route and settles it.
func (cs *Consumer) handle(s *session, d amqp.Delivery) { cs.process(s, d, nil) }

// process is handle for a delivery that may have been held before, until
// the schema registry answered (h, else nil).
func (cs *Consumer) process(s *session, d amqp.Delivery, h *heldLookup) {
	began := time.Now()
	cs.stats.inFlight.Add(1)
	defer cs.stats.inFlight.Add(-1)
	if h == nil {
		cs.stats.lastDelivery.Store(began.UnixNano())
		cs.consumedOne(d.Type)
	}
	env := envelopeOf(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType)
	if cs.requeue {
		key := requeueKey(d, env)
		env.Attempt = cs.requeueAttempt(d, env)
		before := cs.requeues.count(key)
		defer func() {
			// Settled another way than by a requeue: forget its count.
			if cs.requeues.count(key) == before {
				cs.requeues.forget(key)
			}
		}()
	}
	ctx, span := cs.startProcess(&d, env)
	defer span.end()
	if d.Redelivered && h == nil {
		// It may be a message that kills the process: what is settled is
		// acked before it runs, so that a crash it causes does not count
		// as a redelivery of the others (acks.go).
		cs.flushAcks(s, flushAll)
	}
	if h == nil && cs.poisoned(ctx, s, d, env) {
		span.fail("could not be handled: redelivered too many times without being settled")
		return
	}
	undecodable := func(why string) {
		why = "could not be decoded: " + why
		span.fail(why)
		cs.c.metrics.processed(cs.queue, d.Type, time.Since(began), "undecodable")
		cs.park(ctx, s, d, env, why, outcomeUndecodable)
	}
	route, ok := cs.route(d.Type)
	if !ok {
		undecodable(fmt.Sprintf("no handler for type %q", d.Type))
		return
	}
	if len(d.Body) > cs.cfg.maxBody {
		// Parked unread: no codec sees it, so nothing it holds can make
		// the decoder allocate.
		undecodable(bodyTooLarge(len(d.Body), cs.cfg.maxBody).Error())
		return
	}
	ctx = withDecodeInfo(ctx, decodeInfo{fingerprint: headerString(d.Headers, HeaderSchemaFingerprint), maxBody: cs.cfg.maxBody})
	ack, err := route.run(ctx, cs.c, &d, env)
	if err != nil && errors.Is(err, ErrRegistryUnavailable) {
		// Not the body's fault: the registry did not answer. The delivery
		// is held (its prefetch slot kept, the worker freed) and decoded
		// again when the registry may be back; never parked, and not
		// nacked back, which on a quorum queue spends its delivery limit.
		span.outcome = "registry_unavailable"
		cs.holdForRegistry(s, d, h, err)
		return
	}
	if h != nil {
		cs.registryBack()
	}
	if err != nil && transient(err) {
		// Not the body's fault: the consumer is being stopped (a cancelled
		// or expired context). The message goes back, not to parked.
		span.outcome = "returned"
		cs.log.Warn("acemq: could not decode for now; returning the message to its queue", "err", err, "id", d.MessageId)
		cs.returnLater(s, d)
		return
	}
	if err != nil {
		undecodable(err.Error())
		return
	}
	kind := ack.Kind()
	errType := ""
	if kind != AckAccept {
		errType = kind.String()
	}
	var pe *PanicError
	if errors.As(ack.Err(), &pe) {
		cs.logPanic(pe, d, env)
		span.panicked(pe)
		errType = "panic"
	}
	cs.processed(d.Type, time.Since(began), errType)
	span.outcome = kind.String()
	switch kind {
	case AckAccept:
		cs.settle(s, d)
		cs.settledAs(d, outcomeAccepted, "")
	case AckRetry:
		span.fail(reason(ack.Err()))
		cs.retry(ctx, s, d, env, reason(ack.Err()))
	case AckReject:
		why := "rejected by the handler: " + reason(ack.Err())
		span.fail(why)
		cs.deadLetter(ctx, s, d, env, why, outcomeRejected)
	case AckPark:
		why := "parked by the handler: " + reason(ack.Err())
		span.fail(why)
		cs.park(ctx, s, d, env, why, outcomeParked)
	}
}

// typeOpts are the metric options of the common path of one message type
// on one consumer (consumed, processed with Accept, accepted) and its
// process span's name. A consumer
// keeps those of the type it saw last, so that a run of one type (the
// usual queue) takes neither the type registry's lock nor the option
// map's for each delivery.
type typeOpts struct {
	typ, known          string
	spanName            string // the process span's: "<queue> process"
	consumed, processOK attrOpts
	accepted            attrOpts
}

func (cs *Consumer) typeOpts(typ string) *typeOpts {
	if t := cs.lastType.Load(); t != nil && t.typ == typ {
		return t
	}
	m, known := cs.c.metrics, knownType(typ)
	t := &typeOpts{typ: typ, known: known, spanName: spanName(cs.queue, "process"),
		consumed:  m.opts(attrKey{kind: kindConsume, dest: cs.queue, typ: known}),
		processOK: m.opts(attrKey{kind: kindProcess, dest: cs.queue, typ: known}),
		accepted:  m.opts(attrKey{kind: kindOutcome, dest: cs.queue, typ: known, outcomeName: outcomeAccepted.String()}),
	}
	cs.lastType.Store(t)
	return t
}

// consumedOne counts a delivery of type typ handed to cs.
func (cs *Consumer) consumedOne(typ string) {
	m := cs.c.metrics
	if ctx := context.Background(); m.consumed.Enabled(ctx) {
		m.consumed.Add(ctx, 1, cs.typeOpts(typ).consumed.add...)
	}
}

// processed records how long a delivery of type typ took to get its
// answer; errType is "" for Accept.
func (cs *Consumer) processed(typ string, took time.Duration, errType string) {
	if errType != "" {
		cs.c.metrics.processed(cs.queue, typ, took, errType)
		return
	}
	m := cs.c.metrics
	if ctx := context.Background(); m.processDuration.Enabled(ctx) {
		m.processDuration.Record(ctx, took.Seconds(), cs.typeOpts(typ).processOK.rec...)
	}
}

// transient reports a decode error that may pass: a registry that did not
// answer, or a cancelled context.
func transient(err error) bool {
	return errors.Is(err, ErrRegistryUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// route finds the route for a type. A message with no type on a queue with
// one route goes to that route.
func (cs *Consumer) route(typ string) (Route, bool) {
	if r, ok := cs.routes[typ]; ok {
		return r, true
	}
	if typ == "" && len(cs.routes) == 1 {
		for _, r := range cs.routes {
			return r, true
		}
	}
	return Route{}, false
}

// settledAs counts d's outcome once it is carried out; wait is where a
// retry waits.
func (cs *Consumer) settledAs(d amqp.Delivery, o outcome, wait string) {
	cs.stats.outcomes[o].Add(1)
	if o == outcomeAccepted && wait == "" {
		m := cs.c.metrics
		if ctx := context.Background(); m.outcome.Enabled(ctx) {
			m.outcome.Add(ctx, 1, cs.typeOpts(d.Type).accepted.add...)
		}
		return
	}
	cs.c.metrics.settledAs(cs.queue, d.Type, o, wait)
}

// settle acks d once its copy (if any) is safe, in the session's next
// batch of acks (acks.go).
func (cs *Consumer) settle(s *session, d amqp.Delivery) {
	cs.ack(s, d.DeliveryTag, d.Redelivered)
}
