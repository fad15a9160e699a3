package runtime

import (
	"context"
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Message is a decoded delivery handed to a handler.
type Message[T any] struct {
	// Payload is the decoded body.
	Payload T
	// Envelope is the message's identity, attempt and last error.
	Envelope Envelope
	// Headers are the application's headers; the x-acemq- namespace is
	// stripped (the replay stamps acemq-replayed-* are kept on purpose).
	Headers     map[string]any
	RoutingKey  string
	Redelivered bool

	// incoming is what middlewares see of it (middleware.go).
	incoming Incoming
}

// Handler handles one message type and says what happens next.
type Handler[T any] func(ctx context.Context, m *Message[T]) Ack

// Route binds a message type to its handler on a consumer. Make one with
// Handle.
type Route struct {
	typeName string
	prepare  func(c *Connection) error
	// apps is the handler's Headers when the consumer has them already
	// (none: an empty map), else nil: made from d's.
	run func(ctx context.Context, c *Connection, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error)
	// decode, where set, is run's decode alone, done ahead of the handler
	// (decodeahead.go): the decoded value's call of the handler, or why d
	// could not be decoded. A route whose run does more before its decode
	// (a request's prechecks) has none, and is decoded in its run.
	decode func(ctx context.Context, c *Connection, d *amqp.Delivery) (decodedCall, error)
	// wrap is the route with its handler inside mws (middleware.go).
	wrap func(queue string, mws []Middleware) Route
}

// Handle routes the messages of type mt (matched on the AMQP type
// property) to h. A message whose body mt's codec cannot decode never
// reaches h: it is parked with "could not be decoded: <why>". A panic in h
// is a Retry whose error is a *PanicError: its reason names the panic value
// and the file:line that raised it, and the consumer logs the stack at
// Error.
func Handle[T any](mt *MessageType[T], h Handler[T]) Route {
	r := route(mt, h)
	r.wrap = func(queue string, mws []Middleware) Route { return route(mt, chain(queue, mws, h)) }
	return r
}

// route is the route of mt to h.
func route[T any](mt *MessageType[T], h Handler[T]) Route {
	return Route{
		typeName: mt.Name(),
		prepare: func(c *Connection) error {
			reg := registryFor(mt, c)
			if _, err := mt.Codec(reg); err != nil {
				return err
			}
			if o, ok := reg.(opener); ok && mt.Format() == FormatAvro {
				// A registry that cannot open (a missing credential) fails
				// Consume now, not every message later.
				return o.OpenNow()
			}
			return nil
		},
		run: func(ctx context.Context, c *Connection, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error) {
			return decodeAndCall(ctx, c, mt, d, env, apps, h)
		},
		decode: func(ctx context.Context, c *Connection, d *amqp.Delivery) (decodedCall, error) {
			// One allocation holds the value, its Message and the call:
			// the body is decoded in place into the Payload the handler
			// gets (bench/NOTES.md, "Consume path, per delivery").
			dm := &decodedMessage[T]{h: h}
			if err := decodeInto(ctx, c, mt, d, &dm.m.Payload); err != nil {
				return nil, err
			}
			return dm, nil
		},
	}
}

// decodedCall calls a route's handler on a delivery decoded ahead.
type decodedCall interface {
	call(ctx context.Context, d *amqp.Delivery, env Envelope, apps map[string]any) Ack
}

// decodedMessage is a delivery decoded ahead as T: its Message, the
// Payload filled, and the handler it goes to.
type decodedMessage[T any] struct {
	m Message[T]
	h Handler[T]
}

func (dm *decodedMessage[T]) call(ctx context.Context, d *amqp.Delivery, env Envelope, apps map[string]any) Ack {
	return callHandler(ctx, dm.h, d, env, apps, &dm.m)
}

// decodeAndCall decodes d as mt and calls h with it: the handler's answer,
// or why d could not be decoded.
func decodeAndCall[T any](ctx context.Context, c *Connection, mt *MessageType[T], d *amqp.Delivery, env Envelope, apps map[string]any, h Handler[T]) (Ack, error) {
	m := &Message[T]{}
	if err := decodeInto(ctx, c, mt, d, &m.Payload); err != nil {
		return Ack{}, err
	}
	return callHandler(ctx, h, d, env, apps, m), nil
}

// decodeInto decodes d's body as mt into *v, checking its content type.
func decodeInto[T any](ctx context.Context, c *Connection, mt *MessageType[T], d *amqp.Delivery, v *T) error {
	codec, err := codecFor(mt, c)
	if err != nil {
		return err
	}
	if mt.Format() != FormatText && d.ContentType != "" && d.ContentType != codec.ContentType() {
		return fmt.Errorf("content type %q is not %q", d.ContentType, codec.ContentType())
	}
	return codec.Decode(ctx, d.Body, v)
}

// callHandler calls h with m, its Payload decoded from d, and apps, its
// application headers (nil: made from d's).
func callHandler[T any](ctx context.Context, h Handler[T], d *amqp.Delivery, env Envelope, apps map[string]any, m *Message[T]) Ack {
	if apps == nil {
		apps = core.AppHeaders(d.Headers)
	}
	m.Envelope = env
	m.Headers = apps
	m.RoutingKey = deliveredRoutingKey(d)
	m.Redelivered = d.Redelivered
	return invoke(ctx, h, m)
}

// invoke calls h, turning a panic into a Retry with a *PanicError.
func invoke[T any](ctx context.Context, h Handler[T], m *Message[T]) (a Ack) {
	defer func() {
		if r := recover(); r != nil {
			a = Retry(NewPanicError(r))
		}
	}()
	return h(ctx, m)
}
