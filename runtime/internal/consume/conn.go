package consume

import (
	"context"
	"sync/atomic"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// Conn is what a consumer needs of its connection: package runtime's
// *Connection, through an adapter of its own (so that none of it is the
// Connection's API).
type Conn interface {
	core.Conn
	// Tracer is the connection's tracer, and false when tracing is off.
	Tracer() (trace.Tracer, bool)
	// BlockedNote is what an error adds while the broker blocks the
	// connection: "" when it does not.
	BlockedNote() string
	// CorkOf is the corked socket of conn, or nil (amqps).
	CorkOf(conn *amqp.Connection) *amqpx.CorkConn
	// UpSignal is closed once the connection is up again.
	UpSignal() <-chan struct{}
	// Untrack forgets cs once it has stopped.
	Untrack(cs *Consumer)
	// SetAside publishes a copy on the consumers' confirm channel and
	// waits for its confirm.
	SetAside(ctx context.Context, o amqpx.Outgoing) error
	// PublishThen writes a copy on the consumers' confirm channel; then
	// gets its outcome, arrived is set once it is known.
	PublishThen(ctx context.Context, o amqpx.Outgoing, then func(error), arrived *atomic.Bool) error
	// ChannelOn opens a channel on the connection.
	ChannelOn(ctx context.Context) (*amqp.Channel, *amqp.Connection, error)
	// NewChannel opens a channel on conn within ctx.
	NewChannel(ctx context.Context, conn *amqp.Connection) (*amqp.Channel, error)
	// Closed reports whether the connection was closed.
	Closed() bool
	// DialOwn dials a connection of the consumer's own (after a frame
	// error of the client closed the shared one).
	DialOwn(ctx context.Context) (*amqp.Connection, error)
}

// callOn is ch as a channel for one call's round trips.
func (cs *Consumer) callOn(ch *amqp.Channel) *amqpx.CallChannel {
	return &amqpx.CallChannel{Ch: ch, Note: cs.conn.BlockedNote}
}
