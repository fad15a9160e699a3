package rpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/obs"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// Conn is what a requester and a responder need of their connection:
// package runtime's *Connection, through an adapter of its own (so that
// none of it is the Connection's API). A request route finds it as the
// core.Conn its route runs on.
type Conn interface {
	core.Conn
	// Metrics are the connection's metrics; Log its logger.
	Metrics() *obs.Metrics
	Log() *slog.Logger
	// BlockedNote is what an error adds while the broker blocks the
	// connection: "" when it does not; BlockedErr is the error of a
	// publish refused for the block, nil when there is none.
	BlockedNote() string
	BlockedErr() error
	// CorkOf is the corked socket of conn, or nil (amqps).
	CorkOf(conn *amqp.Connection) *amqpx.CorkConn
	// UpSignal is closed once the connection is up again.
	UpSignal() <-chan struct{}
	// ReconnectBounds are the connection's shortest and longest waits
	// between two attempts.
	ReconnectBounds() (lo, hi time.Duration)
	// ChannelOn opens a channel on the connection.
	ChannelOn(ctx context.Context) (*amqp.Channel, *amqp.Connection, error)
	// CallChannel opens a channel for one call's round trips.
	CallChannel(ctx context.Context) (*amqpx.CallChannel, error)
	// StartPublish and EndPublish are a publish's span and metrics;
	// PublishError is a publish's failure as its caller sees it.
	StartPublish(ctx context.Context, o *amqpx.Outgoing) trace.Span
	EndPublish(span trace.Span, o *amqpx.Outgoing, start time.Time, err error)
	PublishError(o amqpx.Outgoing, err error) error
	// CheckExchange refuses a publish to an exchange known not to exist.
	CheckExchange(ctx context.Context, exchange string) error
	// Publish publishes o on the connection's confirm channel and waits
	// for its confirm.
	Publish(ctx context.Context, o amqpx.Outgoing) error
	// NewPublishing is a fresh message of type typ with headers.
	NewPublishing(typ, contentType string, body []byte, headers map[string]any) amqp.Publishing
	// Encode encodes v with codec as a message of type typ to publish.
	Encode(ctx context.Context, typ string, codec msgtype.Codec, v any) (amqpx.Outgoing, error)
}

// callOn is ch as a channel for one call's round trips.
func callOn(c Conn, ch *amqp.Channel) *amqpx.CallChannel {
	return &amqpx.CallChannel{Ch: ch, Note: c.BlockedNote}
}

// unavailableError marks err as a window of unavailability
// (core.ErrUnavailable).
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{core.ErrUnavailable, e.err} }
