package runtime

import "github.com/acemq/acemq-go/runtime/internal/amqpx"

// fit makes o fit p's connection before it is written: a copy (o.origin
// set) loses foreign headers (amqpx.FitFrame), an application publish (an
// outbox's row is one) that does not fit is refused. A copy is checked
// again as an application publish was (checkOutgoing): one the runtime
// made with a short string it cannot write is refused, not written.
func (p *publisher) fit(o *amqpx.Outgoing) error {
	if o.Origin == "" || o.Origin == amqpx.OriginOutbox {
		return amqpx.TooLarge(o.Msg, p.frameMax)
	}
	amqpx.FitFrame(&o.Msg, p.frameMax)
	return checkOutgoing(o.Exchange, o.Key, &o.Msg, 0)
}

// frameMax is the frame_max of c's connection (amqpx.DefaultFrameMax while it
// has none).
func (c *Connection) frameMax() int {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	return amqpx.FrameMaxOf(conn)
}
