package runtime

import (
	"context"

	"github.com/acemq/acemq-go/runtime/internal/consume"
	"github.com/acemq/acemq-go/runtime/internal/rpc"
)

// RequestHandler answers one request type: the reply, or an error that its
// caller receives as a *ReplyError (a *ReplyError returned here is sent
// with its own Code). An error made by RetryRequest instead sends the
// request up its queue's retry ladder, without a reply yet.
type RequestHandler[Req, Rep any] func(ctx context.Context, m *Message[Req]) (Rep, error)

// RetryRequest, returned by a RequestHandler, retries the request by its
// queue's retry policy instead of replying: for a failure that may pass
// (a dependency down). The caller keeps waiting, within its ctx. Before
// each retry the responder checks that the caller is still there (see
// Connection.RequesterWaiting); a request whose caller has gone is settled
// without a reply and without climbing the ladder. A request that runs out
// of attempts is dead-lettered like any message, and its caller's ctx
// ends the wait.
func RetryRequest(err error) error { return rpc.RetryRequest(err) }

// HandleRequest routes the requests of type reqType to h, which answers
// each with a reply of type repType (or an error): the reply is published
// to the request's reply_to with its correlation_id (docs/design.md,
// "Request and reply"), and the request is acked once the broker confirmed
// the reply. With WithRequesterCheck on the consumer, a request whose
// caller has gone is settled before h is called.
//
// A request without reply_to is parked (nowhere to reply), and so is one
// whose reply_to is not a requester's address (a direct reply-to address
// or a queue of wire.ReplyQueuePrefix's shape, unless WithReplyToAllowed says
// more) without calling h; one that does not decode is answered with a *ReplyError "bad_request" and parked; one
// that expects another reply type than repType is answered
// "wrong_reply_type"; a handler that panics answers "panic" with the
// panic's reason. A reply the broker cannot deliver (its requester has
// gone: a reply queue that no longer exists) is dropped and the request
// settled.
//
// Middlewares (WithMiddleware) run around h and its answer: the Ack next
// returns to them is the answer's outcome, Accept once the reply (or
// error reply) is confirmed or dropped, Retry when it could not be sent or
// for RetryRequest. A middleware that marks a message handled on Accept
// (pgstore's inbox, redisstore's dedup) marks a request only once it is
// answered, so that a request retried for want of a reply is answered,
// not taken for a duplicate of itself.
func HandleRequest[Req, Rep any](reqType *MessageType[Req], repType *MessageType[Rep], h RequestHandler[Req, Rep]) Route {
	return rpc.HandleRequest(reqType, repType, rpc.Handler[Req, Rep](h))
}

// RequesterWaiting reports whether the requester behind replyTo (a
// request's reply_to, Envelope.ReplyTo) is still there: for a direct
// reply-to address, whether its channel is open; for a reply queue,
// whether the queue exists. It is RabbitMQ's own advice, a passive declare
// of the name on a channel of its own, one round trip: worth it before
// expensive work, not before every cheap reply. false with a nil error
// means gone.
func (c *Connection) RequesterWaiting(ctx context.Context, replyTo string) (bool, error) {
	return rpc.RequesterWaiting(ctx, connLink{c}, replyTo)
}

// WithRequesterCheck makes a consumer's request routes (HandleRequest)
// check that each request's caller is still there before calling the
// handler (Connection.RequesterWaiting): a request whose caller has gone
// is settled without a reply. It costs a round trip per request; use it
// for handlers whose work is expensive.
func WithRequesterCheck() ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.RequesterCheck = true })
}

// WithReplyToAllowed widens the reply addresses a consumer's request
// routes reply to. By default a responder replies only to a direct
// reply-to address (amq.rabbitmq.reply-to.*, as the broker rewrites a
// requester's) and to a queue of wire.ReplyQueuePrefix's shape (a Requester's
// WithReplyQueue); a request whose reply_to is anything else, another
// service's queue say, is parked with the reason and its handler is not
// called, so that no request makes the responder publish, with its
// identity and permissions, into a queue it names. Each of names allows
// that queue, or, ending in "*", every queue whose name begins with what
// comes before the "*" (a requester of another library that replies
// through a queue of its own naming). Given more than once, the names add
// up.
func WithReplyToAllowed(names ...string) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.ReplyToAllowed = rpc.AllowReplyTo(c.ReplyToAllowed, names) })
}
