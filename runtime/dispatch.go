package runtime

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/attribute"
)

// handle runs one delivery through its route and settles it.
func (cs *Consumer) handle(s *session, d amqp.Delivery) { cs.process(s, d, nil) }

// process is handle for a delivery that may have been held before, until
// the schema registry answered (h, else nil).
func (cs *Consumer) process(s *session, d amqp.Delivery, h *heldLookup) {
	ctx, span := cs.startProcess(&d)
	defer span.End()
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
	if h == nil && cs.poisoned(s, d, env) {
		return
	}
	route, ok := cs.route(d.Type)
	if !ok {
		cs.outcome("decode")
		cs.park(s, d, env, fmt.Sprintf("could not be decoded: no handler for type %q", d.Type))
		return
	}
	if len(d.Body) > cs.cfg.maxBody {
		// Parked unread: no codec sees it, so nothing it holds can make
		// the decoder allocate.
		cs.outcome("decode")
		cs.park(s, d, env, "could not be decoded: "+bodyTooLarge(len(d.Body), cs.cfg.maxBody).Error())
		return
	}
	ctx = withDecodeInfo(ctx, decodeInfo{fingerprint: headerString(d.Headers, HeaderSchemaFingerprint), maxBody: cs.cfg.maxBody})
	ack, err := route.run(ctx, cs.c, &d, env)
	if err != nil && errors.Is(err, ErrRegistryUnavailable) {
		// Not the body's fault: the registry did not answer. The delivery
		// is held (its prefetch slot kept, the worker freed) and decoded
		// again when the registry may be back; never parked, and not
		// nacked back, which on a quorum queue spends its delivery limit.
		cs.holdForRegistry(s, d, h, err)
		return
	}
	if h != nil {
		cs.registryBack()
	}
	if err != nil && transient(err) {
		// Not the body's fault: the consumer is being stopped (a cancelled
		// or expired context). The message goes back, not to parked.
		cs.outcome("unavailable")
		cs.log.Warn("acemq: could not decode for now; returning the message to its queue", "err", err, "id", d.MessageId)
		cs.returnLater(s, d)
		return
	}
	if err != nil {
		cs.outcome("decode")
		cs.park(s, d, env, "could not be decoded: "+err.Error())
		return
	}
	var pe *PanicError
	if errors.As(ack.Err(), &pe) {
		cs.logPanic(pe, d, env)
	}
	kind := ack.Kind()
	cs.outcome(kind.String())
	span.SetAttributes(attribute.String("acemq.outcome", kind.String()))
	switch kind {
	case AckAccept:
		cs.settle(s, d)
	case AckRetry:
		cs.retry(s, d, env, reason(ack.Err()))
	case AckReject:
		cs.deadLetter(s, d, env, "rejected by the handler: "+reason(ack.Err()))
	case AckPark:
		cs.park(s, d, env, "parked by the handler: "+reason(ack.Err()))
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

func (cs *Consumer) outcome(o string) {
	cs.c.metrics.add(cs.c.metrics.handled, cs.queue, attribute.String("acemq.outcome", o))
}

// settle acks d once its copy (if any) is safe.
func (cs *Consumer) settle(s *session, d amqp.Delivery) {
	s.settled(d.DeliveryTag)
	if err := s.ch.Ack(d.DeliveryTag, false); err != nil {
		cs.log.Warn("acemq: ack failed; the broker will redeliver", "err", err, "id", d.MessageId)
	}
}
