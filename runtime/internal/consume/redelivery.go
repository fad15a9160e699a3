package consume

import (
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"
)

// redeliveries is how many times dv came back unsettled: the broker's
// x-delivery-count on a queue known to be quorum (every RabbitMQ counts a
// closed channel or connection there, 4.3 included), else the count the
// runtime stamped, plus this redelivery. A classic queue's x-delivery-count
// is the producer's, never read: a forged 0 would keep a message that
// kills its consumer from ever being parked.
func (dv *delivery) redeliveries() int {
	if dv.brokerCounts() {
		if n := int(core.PositiveInt(dv.d.Headers[headerDeliveryCount], 0)); n > 0 {
			return n
		}
	}
	return int(core.PositiveInt(dv.d.Headers[wire.HeaderRedeliveries], 0)) + 1
}

// poisoned handles a redelivered delivery under WithRedeliveryLimit and
// reports whether it did: past the limit it is parked with a reason; below
// it, on a classic queue, a copy carrying the count is published to the
// queue (with a confirm) and the original acked, so that the count
// survives the crash of the process that handles the copy next. It returns
// false for a delivery that is to be handled now.
func (dv *delivery) poisoned() bool {
	cs, d := dv.cs, &dv.d
	limit := cs.cfg.RedeliveryLimit
	if limit <= 0 || !d.Redelivered {
		return false
	}
	n := dv.redeliveries()
	if n > limit {
		dv.park(fmt.Sprintf("could not be handled: redelivered %d times without being settled (a consumer crashed or was cut off on it each time)", n), obs.OutcomeParked)
		dv.poisonedNow()
		return true
	}
	if dv.brokerCounts() {
		return false // the broker counts; nothing to stamp
	}
	msg := CopyOf(dv.d, dv.env.Attempt, "", "")
	msg.Headers[wire.HeaderRedeliveries] = int64(n)
	if err := cs.publishCopy(dv.ctx, cs.queue, msg); err != nil {
		cs.log.Warn("acemq: could not stamp the redelivery count; handling the message as it is", "err", err, "id", d.MessageId)
		return false
	}
	dv.settle()
	dv.poisonedNow()
	return true
}
