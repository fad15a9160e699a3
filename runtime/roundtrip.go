package runtime

import (
	"context"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	amqp "github.com/rabbitmq/amqp091-go"
)

// callChannel opens a channel for one call's round trips
// (amqpx.CallChannel).
func (c *Connection) callChannel(ctx context.Context) (*amqpx.CallChannel, error) {
	ch, err := c.channel(ctx)
	if err != nil {
		return nil, err
	}
	return c.callOn(ch), nil
}

// callOn is ch as a channel for one call's round trips, whose stalls name
// the connection's block.
func (c *Connection) callOn(ch *amqp.Channel) *amqpx.CallChannel {
	return &amqpx.CallChannel{Ch: ch, Note: c.blockedNote}
}

// newChannel opens a channel on conn within ctx (amqpx.NewChannel).
func (c *Connection) newChannel(ctx context.Context, conn *amqp.Connection) (*amqp.Channel, error) {
	return amqpx.NewChannel(ctx, conn, c.blockedNote)
}
