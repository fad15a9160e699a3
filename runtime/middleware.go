package runtime

import (
	"github.com/acemq/acemq-go/runtime/internal/consume"
	"github.com/acemq/acemq-go/runtime/internal/core"
)

// Incoming is a message as a Middleware sees it: what its handler's
// Message[T] holds, with the payload as any, and the queue the consumer
// reads. The Envelope, Headers, RoutingKey and Redelivered that the
// innermost next is given are the ones the handler's Message[T] carries;
// the payload is the decoded one, whatever a middleware does. Pass next the
// Incoming you were given, or a copy of it (a new Incoming{} has no
// message, and reaching the handler with one is a panic).
type Incoming = core.Incoming

// HandlerFunc is a handler as a Middleware sees it, whatever the message
// type: the innermost one calls the route's Handler[T].
type HandlerFunc = core.HandlerFunc

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
type Middleware = core.Middleware

type middlewareOption struct{ mws []Middleware }

func (o middlewareOption) applyDial(c *dialConfig) {
	c.middleware = append(c.middleware, o.mws...)
}

func (o middlewareOption) applyConsume(c *consume.Config) {
	c.Middleware = append(c.Middleware, o.mws...)
}

// WithMiddleware installs mws around every handler: on Dial, of every
// consumer of the connection; on a consumer, of its routes. The first
// listed is the outermost; the connection's run outside the consumer's;
// options given more than once add up, in order. A nil middleware is
// skipped.
func WithMiddleware(mws ...Middleware) DialConsumeOption {
	kept := make([]Middleware, 0, len(mws))
	for _, mw := range mws {
		if mw != nil {
			kept = append(kept, mw)
		}
	}
	return middlewareOption{mws: kept}
}
