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
	"go.opentelemetry.io/otel/trace"
)

// The decode stage: a delivery is decoded ahead of its handler by the
// loop that receives it (one worker, decodeAhead), or by the worker that
// takes it (work, process, decode). Either way the worker then begins its
// run here (in flight, counted, its envelope read, its process span
// started), takes the decoded value and hands it to its handler
// (handle.go); one that cannot be decoded is parked, held for the
// registry or returned from here.

// DecodeAhead is how many deliveries a consumer of concurrency 1 decodes
// at most ahead of its handler: decoded, waiting for the handler to be
// done with the one before.
//
// With one worker, each delivery was decoded (and validated) in the
// worker, between two handler calls: the handler waited for the decode,
// and the decode for the handler. Now the loop that takes deliveries from
// the channel decodes each before it hands it to the worker, so the next
// deliveries are decoded while the handler runs the current one, on
// another core; the worker then only calls the handler. Order is kept:
// one loop decodes them in the order they arrive and one worker handles
// them in that order. A delivery that does not decode is handed on with
// its error, in its place, and parked by the worker (process),
// its handler never called.
//
// The bound is what the loop holds decoded and not handled: the work
// queue's DecodeAhead-1 slots and the one it is handing on. Deliveries
// beyond it wait undecoded in amqp091-go's buffer, as they waited in the
// work queue before. With several workers each decodes its own delivery,
// as before: they decode in parallel already, and one loop decoding for
// all of them would be the bottleneck.
const DecodeAhead = 16

// decoded is a delivery's decode, done ahead of its run: the handler's
// call on its value, or why it could not be decoded. done is false for a
// delivery left to its run.
type decoded struct {
	done bool
	call core.DecodedCall
	err  error
}

// decodesAhead reports whether the consumer decodes ahead of its handler.
func (cs *Consumer) decodesAhead() bool { return cs.cfg.Concurrency <= 1 }

// workQueue is how many deliveries wait for the workers: the prefetch,
// or the decode-ahead bound when the consumer decodes ahead.
func (cs *Consumer) workQueue() int {
	if cs.decodesAhead() {
		return max(min(cs.cfg.Prefetch, DecodeAhead)-1, 0)
	}
	return cs.cfg.Prefetch
}

// decodeAhead decodes dv ahead of its run, when it is one to decode
// ahead, into dv.ahead. The codec gets the handlers' context (cancelled
// when Close gives up waiting for them) with its decode info: the process
// span has not started yet, so a registry lookup it makes is not under it.
//
// Not decoded ahead, but in the run as before:
//   - a redelivery: it may be the message that kills the process, so what
//     is settled is acked before it is decoded (process);
//   - a request (HandleRequest): its prechecks come before its decode;
//   - one that cannot reach a codec (unreadable headers, no route, a body
//     over the limit): the run says why at no cost;
//   - one coming back from a registry hold (hold.go): a new run of its own.
func (cs *Consumer) decodeAhead(dv *delivery) {
	d := &dv.d
	if d.Redelivered {
		return
	}
	route, err := cs.routeOf(d)
	if err != nil || !core.DecodesAhead(route) {
		return
	}
	call, err := core.DecodeRoute(route, dv.aheadCtx.Of(cs.handlerCtx, cs.decodeInfo(dv)), cs.conn, d)
	if hook := cs.cfg.DecodedAhead; hook != nil {
		hook(d.MessageId)
	}
	dv.ahead = decoded{done: true, call: call, err: err}
}

// work is a worker: it runs the session's deliveries from work, one at a
// time in a handler's slot, until work is closed.
func (cs *Consumer) work(s *session, work <-chan *delivery) {
	for dv := range work {
		if cs.isClosing() || s.dead.Load() {
			// Not started: it returns to the queue when the channel closes.
			cs.handlers.Done()
			continue
		}
		cs.slots <- struct{}{}
		dv.process()
		<-cs.slots
		cs.handlers.Done()
	}
}

// process runs dv: begun, decoded (or its decode done ahead taken), and
// handed to its handler (handle.go), which settles it (settle.go); or
// the consumer's answer for a delivery that cannot be handled
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
		if dv.poisoned() {
			return
		}
	}
	call, ack, err := dv.decode()
	switch {
	case err != nil:
		dv.notHandled(err)
	case call != nil:
		dv.handle(call)
	default:
		// A request's route decodes and calls its handler in one run
		// (its prechecks come before its decode): its answer.
		dv.handled(ack)
	}
}

// begin starts a run of process: counted in flight (and as consumed, the
// first time), its envelope read, its span started.
func (dv *delivery) begin() {
	cs, d := dv.cs, &dv.d
	dv.began = time.Now()
	dv.opts = cs.typeOpts(d.Type)
	cs.stats.inFlight.Add(1)
	if dv.lookup == nil {
		cs.stats.lastDelivery.Store(dv.began.UnixNano())
		dv.consumed()
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

// startSpan starts dv's process span, the consumer span of one delivery:
// the child of the span its headers carry (the publish, or the runtime's
// republish), linked to it too, as the messaging conventions ask. dv.ctx
// is the handler's context, carrying it.
func (dv *delivery) startSpan() {
	cs, d := dv.cs, &dv.d
	ctx := cs.handlerCtx
	if d.Headers != nil {
		ctx = obs.Propagator.Extract(ctx, obs.TableCarrier(d.Headers))
	}
	tr, ok := cs.conn.Tracer()
	if !ok {
		dv.ctx, dv.span = ctx, obs.ProcessSpan{Span: obs.IdleSpan}
		return
	}
	remote := trace.SpanContextFromContext(ctx)
	t := dv.opts
	ctx, span := tr.Start(ctx, t.spanName, obs.ConsumerStart...)
	if remote.IsValid() && span.IsRecording() {
		span.AddLink(trace.Link{SpanContext: remote})
	}
	dv.ctx, dv.span = ctx, obs.ProcessSpan{Span: span, D: d, Queue: cs.queue, Typ: t.known, Attempt: dv.env.Attempt}
}

// typeOpts are the metric options of the common path of one message type
// on one consumer (consumed, processed with Accept, accepted) and its
// process span's name. A consumer keeps those of the type it saw last, so
// that a run of one type (the usual queue) takes neither the type
// registry's lock nor the option map's for each delivery; each
// delivery keeps its own (delivery.opts) from its begin to its settling.
type typeOpts struct {
	typ, known          string
	spanName            string // the process span's: "<queue> process"
	consumed, processOK obs.AttrOpts
	accepted            obs.AttrOpts
}

func (cs *Consumer) typeOpts(typ string) *typeOpts {
	if t := cs.lastType.Load(); t != nil && t.typ == typ {
		return t
	}
	m, known := cs.metrics, obs.KnownType(typ)
	t := &typeOpts{typ: typ, known: known, spanName: obs.SpanName(cs.queue, "process"),
		consumed:  m.Opts(obs.AttrKey{Kind: obs.KindConsume, Dest: cs.queue, Typ: known}),
		processOK: m.Opts(obs.AttrKey{Kind: obs.KindProcess, Dest: cs.queue, Typ: known}),
		accepted:  m.Opts(obs.AttrKey{Kind: obs.KindOutcome, Dest: cs.queue, Typ: known, OutcomeName: obs.OutcomeAccepted.String()}),
	}
	cs.lastType.Store(t)
	return t
}

// consumed counts dv as a delivery of its type handed to its consumer.
func (dv *delivery) consumed() {
	m := dv.cs.metrics
	if ctx := context.Background(); m.Consumed.Enabled(ctx) {
		m.Consumed.Add(ctx, 1, dv.opts.consumed.Add...)
	}
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

// decode is dv's decoded value's call of its handler: the decode done
// ahead, else its route's decode now, under the process span. A route
// without a decode of its own (a request's) is run whole: call is nil and
// ack its handler's answer. err is why there is neither (it matches
// ErrRegistryUnavailable or is transient, else dv cannot be decoded).
func (dv *delivery) decode() (call core.DecodedCall, ack core.Ack, err error) {
	cs, d := dv.cs, &dv.d
	if a := dv.ahead; a.done {
		// Decoded ahead, while the handler before it ran.
		if a.err == nil {
			dv.ctx = dv.runCtx.Of(dv.ctx, dv.aheadCtx.Info())
		}
		return a.call, core.Ack{}, a.err
	}
	route, err := cs.routeOf(d)
	if err != nil {
		return nil, core.Ack{}, err
	}
	dv.ctx = dv.runCtx.Of(dv.ctx, cs.decodeInfo(dv))
	if core.DecodesAhead(route) {
		call, err = core.DecodeRoute(route, dv.ctx, cs.conn, d)
	} else {
		ack, err = core.RunRoute(route, dv.ctx, cs.conn, d, dv.env, dv.apps)
	}
	if dv.lookup != nil && !errors.Is(err, core.ErrRegistryUnavailable) {
		// Back from a registry hold, and the registry answered.
		cs.registryBack()
	}
	return call, ack, err
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

// core.DecodeInfo is what the consumer tells its codec (and the handler's ctx)
// about dv.
func (cs *Consumer) decodeInfo(dv *delivery) core.DecodeInfo {
	return core.DecodeInfo{Fingerprint: core.HeaderString(dv.d.Headers, wire.HeaderSchemaFingerprint),
		Schema: core.HeaderString(dv.d.Headers, wire.HeaderSchema), MaxBody: cs.cfg.MaxBody,
		CheckRequester: cs.cfg.RequesterCheck, Received: dv.received, ReplyTo: cs.cfg.ReplyToAllowed,
		Queue: cs.queue}
}

// notHandled does what the consumer answers for a delivery that could
// not be decoded: held for the registry, returned for now, or parked.
func (dv *delivery) notHandled(err error) {
	switch {
	case errors.Is(err, core.ErrRegistryUnavailable):
		// Not the body's fault: the registry did not answer. The delivery
		// is held (its prefetch slot kept, the worker freed) and decoded
		// again when the registry may be back; never parked, and not
		// nacked back, which on a quorum queue spends its delivery limit.
		dv.holdForRegistry(err)
	case core.Transient(err):
		// Not the body's fault: the consumer is being stopped (a cancelled
		// or expired context). The message goes back, not to parked.
		dv.returnForNow(err)
	default:
		dv.undecodable(err)
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

// notDecoded records a delivery that could not be decoded (why): the
// span's Error status, messaging.process.duration with error.type
// undecodable.
func (dv *delivery) notDecoded(why string) {
	dv.span.Fail(why)
	dv.cs.metrics.Processed(dv.cs.queue, dv.d.Type, time.Since(dv.began), "undecodable")
}

// returnForNow nacks back, after a pause, a delivery that could not be
// decoded for now.
func (dv *delivery) returnForNow(err error) {
	dv.returned(err)
	dv.returnLater()
}

// returned records a delivery that could not be decoded for now (the
// consumer is being stopped) and goes back to its queue.
func (dv *delivery) returned(err error) {
	dv.span.Outcome = "returned"
	dv.cs.log.Warn("acemq: could not decode for now; returning the message to its queue", "err", err, "id", dv.d.MessageId)
}
