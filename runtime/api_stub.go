package runtime

// API skeleton: signatures fixed, bodies land in connection.go, publish.go,
// consume.go, pull.go and declare.go.

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Connection is a connection to RabbitMQ that reconnects on its own.
type Connection struct{}

// Dial connects to url.
func Dial(ctx context.Context, url string, opts ...DialOption) (*Connection, error) {
	panic("not yet")
}

// Close closes the connection.
func (c *Connection) Close(ctx context.Context) error { panic("not yet") }

// Registry is the connection's schema registry.
func (c *Connection) Registry() SchemaRegistry { panic("not yet") }

// Declare declares t.
func (c *Connection) Declare(ctx context.Context, t *Topology) error { panic("not yet") }

// MessageCount is the number of ready messages in queue.
func (c *Connection) MessageCount(ctx context.Context, queue string) (int, error) { panic("not yet") }

// Pull takes one unsettled delivery from queue, nil when empty.
func (c *Connection) Pull(ctx context.Context, queue string) (*Delivery, error) { panic("not yet") }

// Publish publishes v as type mt to exchange.
func Publish[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, v T, opts ...PublishOption) error {
	panic("not yet")
}

// PublishAll publishes vs as a pipelined batch.
func PublishAll[T any](ctx context.Context, c *Connection, mt *MessageType[T], exchange string, vs []T, opts ...PublishOption) error {
	panic("not yet")
}

// Message is a decoded delivery handed to a handler.
type Message[T any] struct {
	Payload     T
	Envelope    Envelope
	Headers     map[string]any
	RoutingKey  string
	Redelivered bool
}

// Handler handles one message type.
type Handler[T any] func(ctx context.Context, m *Message[T]) Ack

// Route binds a message type to its handler on a consumer.
type Route struct{}

// Handle routes messages of type mt to h.
func Handle[T any](mt *MessageType[T], h Handler[T]) Route { panic("not yet") }

// ConsumerSpec is what generated code knows about a consumer.
type ConsumerSpec struct {
	Queue            string
	Retry            *RetryPolicy
	RequeueOnFailure bool
	Routes           []Route
}

// Consumer consumes a queue.
type Consumer struct{}

// Consume starts consuming.
func Consume(ctx context.Context, c *Connection, spec ConsumerSpec, opts ...ConsumeOption) (*Consumer, error) {
	panic("not yet")
}

// Close stops the consumer.
func (cs *Consumer) Close(ctx context.Context) error { panic("not yet") }

// Delivery is an unsettled message from Pull.
type Delivery struct {
	Body        []byte
	Headers     map[string]any
	Envelope    Envelope
	Exchange    string
	RoutingKey  string
	Redelivered bool
	raw         amqp.Delivery
	_           time.Time
}

// Ack acknowledges the delivery.
func (d *Delivery) Ack(ctx context.Context) error { panic("not yet") }

// Nack returns the delivery to its queue (requeue) or drops it.
func (d *Delivery) Nack(ctx context.Context, requeue bool) error { panic("not yet") }
