package consume

import "github.com/acemq/acemq-go/runtime/internal/core"

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
// its error, in its place, and parked by the worker as before (process),
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
