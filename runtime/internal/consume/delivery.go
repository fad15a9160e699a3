package consume

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/codec"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// delivery is one delivery in flight on a consumer, from the moment a
// worker (or a registry hold that comes back) starts processing it until
// it is settled: acked once its copy (if any) is confirmed, nacked back,
// or left to the broker. It owns what is done to it: its retry
// (retry.go), its dead letter or park (setaside.go), its settling, its
// hold (hold.go). What becomes of it is recorded by outcome.go. Each run
// of process has a delivery of its own: a delivery held for the registry
// is processed again as a new one.
type delivery struct {
	cs *Consumer
	// s is the session it came on: it can only be settled there.
	s   *session
	d   amqp.Delivery
	env core.Envelope
	// apps is the handler's Headers when begin knew them (none: an
	// empty map of its own), else nil (made from d's).
	apps map[string]any
	// lookup is the registry hold this run came back from, else nil.
	lookup *heldLookup
	// received is when serve took it from the session's channel.
	received time.Time
	// ahead is its decode, when it was decoded ahead of its run.
	ahead decoded
	// ctx is the handler's: the process span's, then with the decode
	// info (runCtx). aheadCtx is the decode ahead's.
	ctx              context.Context
	runCtx, aheadCtx core.InfoCtx
	span             obs.ProcessSpan
	began            time.Time
	// requeueKey names the message across requeues, and requeues is its
	// count when the run began (requeue_on_failure only).
	requeueKey string
	requeues   int
}

// handle runs one delivery (decoded ahead or not) through its route and
// settles it.
func (cs *Consumer) handle(dv *delivery) { dv.process() }

// process runs dv through its route and carries out the answer: the
// handler's, or the consumer's for a delivery that cannot be handled
// (redelivered too often, undecodable) or not now (the registry is down,
// the consumer is stopping).
func (dv *delivery) process() {
	dv.begin()
	defer dv.end()
	if dv.d.Redelivered && dv.lookup == nil {
		// It may be a message that kills the process: what is settled is
		// acked before it runs, so that a crash it causes does not count
		// as a redelivery of the others (ackbatch.go).
		dv.s.flushAcks(flushAll)
	}
	if dv.lookup == nil && dv.poisoned() {
		return
	}
	ack, err := dv.run()
	if errors.Is(err, core.ErrRegistryUnavailable) {
		// Not the body's fault: the registry did not answer. The delivery
		// is held (its prefetch slot kept, the worker freed) and decoded
		// again when the registry may be back; never parked, and not
		// nacked back, which on a quorum queue spends its delivery limit.
		dv.holdForRegistry(err)
		return
	}
	if dv.lookup != nil {
		dv.cs.registryBack()
	}
	switch {
	case err != nil && core.Transient(err):
		// Not the body's fault: the consumer is being stopped (a cancelled
		// or expired context). The message goes back, not to parked.
		dv.returnForNow(err)
	case err != nil:
		dv.undecodable(err)
	default:
		dv.carryOut(ack)
	}
}

// begin starts a run of process: counted in flight (and as consumed, the
// first time), its envelope read, its span started.
func (dv *delivery) begin() {
	cs, d := dv.cs, &dv.d
	dv.began = time.Now()
	cs.stats.inFlight.Add(1)
	if dv.lookup == nil {
		cs.stats.lastDelivery.Store(dv.began.UnixNano())
		cs.consumedOne(d.Type)
	}
	var apps int
	dv.env, apps = core.EnvelopeAndApps(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType)
	if apps == 0 {
		// No application headers (as the runtime publishes): the
		// handler's map is empty, known from the envelope's pass over
		// them without another (appHeaders).
		dv.apps = map[string]any{}
	}
	dv.env.ReplyTo = d.ReplyTo
	if cs.requeue {
		dv.requeueKey = requeueKey(dv.d, dv.env)
		dv.env.Attempt = dv.requeueAttempt()
		dv.requeues = cs.requeues.count(dv.requeueKey)
	}
	dv.startSpan()
}

// end ends the run: its span ended, its requeue count forgotten when it
// was settled another way than by a requeue, out of flight.
func (dv *delivery) end() {
	cs := dv.cs
	dv.span.End()
	if cs.requeue && cs.requeues.count(dv.requeueKey) == dv.requeues {
		cs.requeues.forget(dv.requeueKey)
	}
	cs.stats.inFlight.Add(-1)
}

// run decodes dv with its route and calls the handler: its answer, or why
// there is none (an error that matches ErrRegistryUnavailable or is
// transient, else the reason it cannot be decoded).
func (dv *delivery) run() (core.Ack, error) {
	cs, d := dv.cs, &dv.d
	if a := dv.ahead; a.done {
		// Decoded ahead, while the handler before it ran (decodeahead.go).
		if a.err != nil {
			return core.Ack{}, a.err
		}
		dv.ctx = dv.runCtx.Of(dv.ctx, dv.aheadCtx.Info())
		return a.call.Call(dv.ctx, d, dv.env, dv.apps), nil
	}
	route, err := cs.routeOf(d)
	if err != nil {
		return core.Ack{}, err
	}
	dv.ctx = dv.runCtx.Of(dv.ctx, cs.decodeInfo(dv))
	return core.RunRoute(route, dv.ctx, cs.conn, d, dv.env, dv.apps)
}

// routeOf is d's route, or why d cannot be decoded without a codec
// seeing its body.
func (cs *Consumer) routeOf(d *amqp.Delivery) (core.Route, error) {
	if why := core.HeaderString(d.Headers, wire.HeaderUnreadable); why != "" {
		// Cut by the header filter: parked, its handler never sees it.
		return core.Route{}, &amqpx.UnreadableError{Why: why}
	}
	route, ok := cs.route(d.Type)
	if !ok {
		return core.Route{}, fmt.Errorf("no handler for type %q", d.Type)
	}
	if len(d.Body) > cs.cfg.MaxBody {
		// Parked unread: no codec sees it, so nothing it holds can make
		// the decoder allocate.
		return core.Route{}, codec.BodyTooLarge(len(d.Body), cs.cfg.MaxBody)
	}
	return route, nil
}

// core.DecodeInfo is what the consumer tells its codec (and the handler's ctx)
// about dv.
func (cs *Consumer) decodeInfo(dv *delivery) core.DecodeInfo {
	return core.DecodeInfo{Fingerprint: core.HeaderString(dv.d.Headers, wire.HeaderSchemaFingerprint),
		Schema: core.HeaderString(dv.d.Headers, wire.HeaderSchema), MaxBody: cs.cfg.MaxBody,
		CheckRequester: cs.cfg.RequesterCheck, Received: dv.received, ReplyTo: cs.cfg.ReplyToAllowed,
		Queue: cs.queue}
}

// carryOut does what the handler answered, once it is recorded.
func (dv *delivery) carryOut(ack core.Ack) {
	kind, why := dv.answered(ack)
	switch kind {
	case core.AckAccept:
		dv.settle()
		dv.accepted()
	case core.AckRetry:
		dv.retry(why)
	case core.AckReject:
		dv.deadLetter(why, obs.OutcomeRejected)
	case core.AckPark:
		dv.park(why, obs.OutcomeParked)
	}
}

// undecodable parks a delivery that cannot be decoded (or whose headers
// could not be read), with why.
func (dv *delivery) undecodable(err error) {
	why := "could not be decoded: " + err.Error()
	var ur *amqpx.UnreadableError
	if errors.As(err, &ur) {
		why = "could not be read: " + ur.Why
	}
	dv.notDecoded(why)
	dv.park(why, obs.OutcomeUndecodable)
}

// returnForNow nacks back, after a pause, a delivery that could not be
// decoded for now.
func (dv *delivery) returnForNow(err error) {
	dv.returned(err)
	dv.returnLater()
}

// route finds the route for a type. A message with no type on a queue with
// one route goes to that route.
func (cs *Consumer) route(typ string) (core.Route, bool) {
	if r, ok := cs.routes[typ]; ok {
		return r, true
	}
	if typ == "" && len(cs.routes) == 1 {
		for _, r := range cs.routes {
			return r, true
		}
	}
	return core.Route{}, false
}

// settle acks dv once its copy (if any) is safe, in the session's next
// batch of acks (ackbatch.go).
func (dv *delivery) settle() {
	dv.s.ack(dv.d.DeliveryTag, dv.d.Redelivered)
}

// nack puts dv back on its queue, not processed (basic.nack: on
// RabbitMQ 4.3 a quorum queue does not count it; 3.10 and 4.0 do),
// logging failed when the nack cannot be sent.
func (dv *delivery) nack(failed string) bool {
	return dv.giveBack(dv.s.nackTag, failed)
}

// reject puts dv back on its queue as failed (basic.reject with requeue:
// every quorum queue counts it, 4.3 included), logging failed when the
// reject cannot be sent.
func (dv *delivery) reject(failed string) bool {
	return dv.giveBack(dv.s.rejectTag, failed)
}

func (dv *delivery) giveBack(send func(tag uint64) error, failed string) bool {
	if err := send(dv.d.DeliveryTag); err != nil {
		dv.cs.log.Warn(failed, "err", err, "id", dv.d.MessageId)
		return false
	}
	return true
}

// returnLater nacks dv back to its queue after a pause: never a hot loop.
// The worker is free meanwhile; the delivery keeps its prefetch slot.
func (dv *delivery) returnLater() {
	time.AfterFunc(setAsidePause, func() { dv.nack("acemq: nack failed; the broker will redeliver") })
}

// discarded reports (and logs) a delivery of a dead session, or one whose
// consumer Close let go of: what its handler decided is not carried out,
// since its ack can no longer reach the broker, which redelivers the
// message (to the next session, or when the closed consumer's channel
// closes) anyway.
func (dv *delivery) discarded() bool {
	switch {
	case dv.s.dead.Load():
		dv.cs.log.Debug("acemq: the session of this delivery died; its settlement is discarded (the broker redelivers it)", "id", dv.d.MessageId)
	case dv.cs.letGo.Load():
		dv.cs.log.Debug("acemq: the consumer was closed before this delivery was set aside; its settlement is discarded (the broker redelivers it)", "id", dv.d.MessageId)
	default:
		return false
	}
	return true
}
