package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/wire"
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
	prepare  func(c Conn) error
	// apps is the handler's Headers when the consumer has them already
	// (none: an empty map), else nil: made from d's.
	run func(ctx context.Context, c Conn, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error)
	// decode, where set, is run's decode alone, done ahead of the handler
	// (internal/consume's decode.go): the decoded value's call of the handler, or why d
	// could not be decoded. A route whose run does more before its decode
	// (a request's prechecks) has none, and is decoded in its run.
	decode func(ctx context.Context, c Conn, d *amqp.Delivery) (DecodedCall, error)
	// wrap is the route with its handler inside mws (middleware.go).
	wrap func(queue string, mws []Middleware) Route
}

// Handle routes the messages of type mt (matched on the AMQP type
// property) to h. A message whose body mt's codec cannot decode never
// reaches h: it is parked with "could not be decoded: <why>". A panic in h
// is a Retry whose error is a *PanicError: its reason names the panic value
// and the file:line that raised it, and the consumer logs the stack at
// Error.
func Handle[T any](mt *msgtype.MessageType[T], h Handler[T]) Route {
	r := route(mt, h)
	r.wrap = func(queue string, mws []Middleware) Route { return route(mt, chain(queue, mws, h)) }
	return r
}

// route is the route of mt to h.
func route[T any](mt *msgtype.MessageType[T], h Handler[T]) Route {
	return Route{
		typeName: mt.Name(),
		prepare: func(c Conn) error {
			reg := RegistryFor(mt, c)
			if _, err := mt.Codec(reg); err != nil {
				return err
			}
			if o, ok := reg.(opener); ok && mt.Format() == msgtype.FormatAvro {
				// A registry that cannot open (a missing credential) fails
				// Consume now, not every message later.
				return o.OpenNow()
			}
			return nil
		},
		run: func(ctx context.Context, c Conn, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error) {
			return decodeAndCall(ctx, c, mt, d, env, apps, h)
		},
		decode: func(ctx context.Context, c Conn, d *amqp.Delivery) (DecodedCall, error) {
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

// DecodedCall calls a route's handler on a delivery decoded ahead.
type DecodedCall interface {
	Call(ctx context.Context, d *amqp.Delivery, env Envelope, apps map[string]any) Ack
}

// decodedMessage is a delivery decoded ahead as T: its Message, the
// Payload filled, and the handler it goes to.
type decodedMessage[T any] struct {
	m Message[T]
	h Handler[T]
}

func (dm *decodedMessage[T]) Call(ctx context.Context, d *amqp.Delivery, env Envelope, apps map[string]any) Ack {
	return callHandler(ctx, dm.h, d, env, apps, &dm.m)
}

// decodeAndCall decodes d as mt and calls h with it: the handler's answer,
// or why d could not be decoded.
func decodeAndCall[T any](ctx context.Context, c Conn, mt *msgtype.MessageType[T], d *amqp.Delivery, env Envelope, apps map[string]any, h Handler[T]) (Ack, error) {
	m := &Message[T]{}
	if err := decodeInto(ctx, c, mt, d, &m.Payload); err != nil {
		return Ack{}, err
	}
	return callHandler(ctx, h, d, env, apps, m), nil
}

// decodeInto decodes d's body as mt into *v, checking its content type.
func decodeInto[T any](ctx context.Context, c Conn, mt *msgtype.MessageType[T], d *amqp.Delivery, v *T) error {
	codec, err := CodecFor(mt, c)
	if err != nil {
		return err
	}
	if mt.Format() != msgtype.FormatText && d.ContentType != "" && d.ContentType != codec.ContentType() {
		return fmt.Errorf("content type %q is not %q", d.ContentType, codec.ContentType())
	}
	return codec.Decode(ctx, d.Body, v)
}

// callHandler calls h with m, its Payload decoded from d, and apps, its
// application headers (nil: made from d's).
func callHandler[T any](ctx context.Context, h Handler[T], d *amqp.Delivery, env Envelope, apps map[string]any, m *Message[T]) Ack {
	if apps == nil {
		apps = AppHeaders(d.Headers)
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

// Incoming is a message as a Middleware sees it: what its handler's
// Message[T] holds, with the payload as any, and the queue the consumer
// reads. The Envelope, Headers, RoutingKey and Redelivered that the
// innermost next is given are the ones the handler's Message[T] carries;
// the payload is the decoded one, whatever a middleware does. Pass next the
// Incoming you were given, or a copy of it (a new Incoming{} has no
// message, and reaching the handler with one is a panic).
type Incoming struct {
	// Queue is the queue the consumer reads.
	Queue       string
	Envelope    Envelope
	Headers     map[string]any
	RoutingKey  string
	Redelivered bool

	// msg is the route's *Message[T].
	msg payloader
}

// payloader is a *Message[T], whatever T.
type payloader interface{ payloadAny() any }

// Payload is the decoded payload, the T of the route's Message[T] (for a
// generated handler, the message's Go type).
func (in *Incoming) Payload() any {
	if in.msg == nil {
		return nil
	}
	return in.msg.payloadAny()
}

// HandlerFunc is a handler as a Middleware sees it, whatever the message
// type: the innermost one calls the route's Handler[T].
type HandlerFunc func(ctx context.Context, m *Incoming) Ack

// Middleware wraps a handler: it runs around next, may put values in the
// ctx it passes on (the handler sees them), may skip next, and returns any
// Ack, next's or its own. Install it with WithMiddleware, on Dial (every
// consumer of the connection) or on a consumer (generated Consume…
// functions take it in their opts).
//
// On a request route (HandleRequest) a middleware's Reject, Park, panic
// or Accept without next is answered to the request's caller at once with
// an error reply, and its Retry is not climbed when the caller has gone.
// next answers the request before it returns: its Ack is the answer's
// outcome, Accept once the reply (or the handler's error reply) is
// confirmed, Retry when it could not be sent or for RetryRequest
// (docs/request-reply.md, "Middleware on request routes").
//
// Middlewares run after the message is decoded (one that cannot be decoded
// is parked without reaching them) and inside the runtime's own span,
// metrics, Stats and logs: a middleware's Retry, Reject or Park is recorded
// as a handler's, and its panic is a Retry with a *PanicError, as a
// handler's panic is.
type Middleware func(next HandlerFunc) HandlerFunc

// chain is h wrapped by mws (the first outermost), for the consumer of
// queue: built once per route when the consumer starts.
func chain[T any](queue string, mws []Middleware, h Handler[T]) Handler[T] {
	next := HandlerFunc(func(ctx context.Context, in *Incoming) Ack {
		m := in.msg.(*Message[T])
		m.Envelope, m.Headers, m.RoutingKey, m.Redelivered = in.Envelope, in.Headers, in.RoutingKey, in.Redelivered
		return h(ctx, m)
	})
	for i := len(mws) - 1; i >= 0; i-- {
		next = mws[i](next)
	}
	return func(ctx context.Context, m *Message[T]) Ack {
		// The Incoming lives in the Message: no allocation of its own.
		m.incoming = Incoming{
			Queue: queue, Envelope: m.Envelope, Headers: m.Headers,
			RoutingKey: m.RoutingKey, Redelivered: m.Redelivered, msg: m,
		}
		return next(ctx, &m.incoming)
	}
}

func (m *Message[T]) payloadAny() any { return m.Payload }

// Conn is the connection a route runs on, as the routes and the engines
// see it: package runtime's *Connection, through an adapter of its own (a
// request route, package runtime's, reaches its *Connection by a type
// assertion on it).
type Conn interface {
	// Codecs is how the connection picks a message type's codec.
	Codecs() *CodecChoice
}

// CodecChoice is how a connection picks a message type's codec.
type CodecChoice struct {
	// Registry is the connection's WithSchemaRegistry, else nil.
	Registry msgtype.SchemaRegistry
	// Default is the registry of a type that has none of its own: the
	// process's FingerprintRegistry.
	Default msgtype.SchemaRegistry
	// Reference is WithReferenceValidation: JSON types validate with the
	// reference validator alone.
	Reference bool
}

// RegistryFor picks the registry of mt on c: the connection's own, else
// the type's, else the process default.
func RegistryFor[T any](mt *msgtype.MessageType[T], c Conn) msgtype.SchemaRegistry {
	return registryOf(mt, c.Codecs())
}

// registryOf is RegistryFor with c's choice in hand.
func registryOf[T any](mt *msgtype.MessageType[T], cc *CodecChoice) msgtype.SchemaRegistry {
	if cc.Registry != nil {
		return cc.Registry
	}
	if r := msgtype.Registry(mt); r != nil {
		return r
	}
	return cc.Default
}

// CodecFor is mt's codec on c: one call of c.Codecs (an interface call on
// every delivery's decode).
func CodecFor[T any](mt *msgtype.MessageType[T], c Conn) (msgtype.Codec, error) {
	cc := c.Codecs()
	if cc.Reference && mt.Format() == msgtype.FormatJSON {
		return msgtype.ReferenceCodec(mt)
	}
	return mt.Codec(registryOf(mt, cc))
}

// opener is a registry that can be opened ahead of its first use
// (registry.OpenLazy's): a Consume whose Avro types use it opens it before
// subscribing, so that a bad configuration fails the Consume rather than
// every message.
type opener interface{ OpenNow() error }

// RunFunc is a route's run: decode d and call the handler. apps is the
// handler's Headers when the consumer has them already (none: an empty
// map), else nil: made from d's.
type RunFunc func(ctx context.Context, c Conn, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error)

// RouteType is the message type r routes (the AMQP type property).
func RouteType(r Route) string { return r.typeName }

// PrepareRoute makes r's codec on c ahead of its first delivery (and opens
// an Avro type's registry), so that a bad schema or registry fails the
// Consume.
func PrepareRoute(r Route, c Conn) error { return r.prepare(c) }

// WrapRoute is r with its handler inside mws, for queue's consumer; r
// itself when it has no wrap.
func WrapRoute(r Route, queue string, mws []Middleware) Route {
	if len(mws) == 0 || r.wrap == nil {
		return r
	}
	return r.wrap(queue, mws)
}

// RunRoute decodes d and calls r's handler.
func RunRoute(r Route, ctx context.Context, c Conn, d *amqp.Delivery, env Envelope, apps map[string]any) (Ack, error) {
	return r.run(ctx, c, d, env, apps)
}

// DecodesAhead reports whether r's decode can run ahead of its handler.
func DecodesAhead(r Route) bool { return r.decode != nil }

// DecodeRoute is r's decode alone: the decoded value's call of the
// handler, or why d could not be decoded.
func DecodeRoute(r Route, ctx context.Context, c Conn, d *amqp.Delivery) (DecodedCall, error) {
	return r.decode(ctx, c, d)
}

// WithRun is r running run instead (a request's, whose prechecks come
// before the decode: so it has no decode ahead).
func WithRun(r Route, run RunFunc) Route {
	r.run, r.decode = run, nil
	return r
}

// WithWrap is r wrapped by wrap in a consumer's middlewares.
func WithWrap(r Route, wrap func(queue string, mws []Middleware) Route) Route {
	r.wrap = wrap
	return r
}

// DecodeAndCall decodes d as mt and calls h with it.
func DecodeAndCall[T any](ctx context.Context, c Conn, mt *msgtype.MessageType[T], d *amqp.Delivery, env Envelope, apps map[string]any, h Handler[T]) (Ack, error) {
	return decodeAndCall(ctx, c, mt, d, env, apps, h)
}

// Chain is h inside mws, for queue's consumer.
func Chain[T any](queue string, mws []Middleware, h Handler[T]) Handler[T] {
	return chain(queue, mws, h)
}

// NewRoute is the route of mt to h (Handle without the middlewares' wrap).
func NewRoute[T any](mt *msgtype.MessageType[T], h Handler[T]) Route { return route(mt, h) }

// Transient reports a decode error that may pass: a registry that did not
// answer, or a cancelled context.
func Transient(err error) bool {
	return errors.Is(err, ErrRegistryUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// deliveredRoutingKey is the routing key a handler sees: a delayed
// message's own (wire.HeaderDelayRoutingKey) when it arrived with a delay
// routing key, else d's.
func deliveredRoutingKey(d *amqp.Delivery) string {
	if _, _, ok := wire.ParseDelayRoutingKey(d.RoutingKey); ok {
		if k, ok := d.Headers[wire.HeaderDelayRoutingKey].(string); ok {
			return k
		}
	}
	return d.RoutingKey
}
