package consume

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
)

// The settle stage: what the handler answered is carried out. An Accept
// is acked in the session's next batch (ackbatch.go) and counted; a
// Retry, Reject or Park first writes its copy (retry.go, setaside.go) or
// holds the delivery (hold.go), and acks it once the copy is confirmed.

// carryOut does what the handler answered (kind, and why for a copy), once
// it is recorded.
func (dv *delivery) carryOut(kind core.AckKind, why string) {
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

// accepted records an Accept carried out.
func (dv *delivery) accepted() { dv.counted(obs.OutcomeAccepted, "") }

// counted counts o in Stats and acemq.outcome; wait is where a retry
// waits.
func (dv *delivery) counted(o obs.Outcome, wait string) {
	cs := dv.cs
	cs.stats.outcomes[o].Add(1)
	if o == obs.OutcomeAccepted && wait == "" {
		m := cs.metrics
		if ctx := context.Background(); m.Outcome.Enabled(ctx) {
			m.Outcome.Add(ctx, 1, dv.opts.accepted.Add...)
		}
		return
	}
	cs.metrics.SettledAs(cs.queue, dv.d.Type, o, wait)
}
