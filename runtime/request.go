package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/rpc"
	"github.com/acemq/acemq-go/runtime/wire"
)

// ErrNoReply is matched by the error of a request whose reply can no longer
// arrive: its reply channel closed (the connection was lost; direct
// reply-to delivers a reply only to the channel that sent the request) or
// the Requester was closed. It also matches ErrUnavailable when the
// connection was lost, ErrClosed when the Requester or its connection was
// closed.
var ErrNoReply = core.ErrNoReply

// ReplyError is a responder's answer that is an error, not a reply: what a
// request's caller gets from Request instead of a reply, never a timeout.
// A request handler that returns one has its Code and Reason sent as they
// are; any other error is sent with Code "error" and its text as Reason.
// Code names the kind of failure ("error", "panic", "bad_request",
// "wrong_reply_type", "rejected", "parked", "not_handled", or a
// responder's own code); Reason is the responder's text (capped at 4096
// bytes); Request is the request's message type and Responder the
// responder's x-acemq-origin, both filled in by the caller's side.
type ReplyError = core.ReplyError

// Requester sends requests and waits for their replies: one channel per
// Requester, on which it consumes its replies and publishes its requests;
// concurrent requests share it, told apart by a reply token of its own
// (x-acemq-reply-token), whatever their correlation ids. By default
// the replies come by RabbitMQ's direct reply-to (no queue: the broker
// hands a reply straight to the channel that sent the request, at most
// once); WithReplyQueue names a durable queue of the Requester's own
// instead. Make one with NewRequester; it opens its channel on first use,
// and again after a connection loss. Safe for concurrent use.
type Requester struct {
	c *Connection
	e *rpc.Requester
}

// RequesterOption configures a Requester.
type RequesterOption interface{ applyRequester(*rpc.Config) }

type requesterOptionFunc func(*rpc.Config)

func (f requesterOptionFunc) applyRequester(c *rpc.Config) { f(c) }

// WithReplyQueue makes the Requester take its replies from a durable queue
// of its own instead of direct reply-to: a reply that arrives while the
// Requester reconnects waits there and reaches its caller, if the caller
// still waits. The queue is named wire.ReplyQueuePrefix + name (name as it is
// when it begins with wire.ReplyQueuePrefix already), the shape a responder
// replies to (Requester.ReplyTo says the name). It is declared durable
// with x-expires ttl (30 minutes when ttl is 0): the broker
// deletes it once no requester has used it for that long (RabbitMQ 4.3
// refuses transient queues that are not exclusive). name must be one
// client's alone: two requesters on one queue take each other's replies.
func WithReplyQueue(name string, ttl time.Duration) RequesterOption {
	return requesterOptionFunc(func(c *rpc.Config) { c.ReplyQueue(name, ttl) })
}

// WithRequestConfirms publishes the Requester's requests in confirm mode
// and fails a request the broker refuses (a basic.nack: a request queue's
// x-overflow reject-publish, a broker's internal error) at once with
// ErrNacked. Without it, requests are not confirmed: a request's reply is
// its confirmation, a request no queue takes still fails at once with
// ErrUnroutable (it is mandatory; the broker returns it), and one the
// broker refuses fails at its ctx's end. Confirms cost the broker a frame
// and the client its bookkeeping for every request: about a fifth of the
// round trips per second (bench/NOTES.md, RR1).
func WithRequestConfirms() RequesterOption {
	return requesterOptionFunc(func(c *rpc.Config) { c.Confirm = true })
}

// NewRequester returns a Requester sending on c. Close it when done.
func NewRequester(c *Connection, opts ...RequesterOption) *Requester {
	cfg := rpc.Config{Conn: connLink{c}}
	for _, o := range opts {
		o.applyRequester(&cfg)
	}
	return &Requester{c: c, e: rpc.New(cfg)}
}

// LateReplies is how many replies came for no waiting request: after their
// caller's ctx ended, or twice. They are dropped, never handed to another
// request.
func (r *Requester) LateReplies() int64 { return r.e.LateReplies() }

// Waiting is how many requests wait for their reply.
func (r *Requester) Waiting() int { return r.e.Waiting() }

// ReplyTo is the reply_to its requests carry: amq.rabbitmq.reply-to, or
// its reply queue's name (WithReplyQueue).
func (r *Requester) ReplyTo() string { return r.e.ReplyTo() }

// Request publishes v as a request of type reqType to exchange and waits for
// its reply, of type repType: the decoded reply, or the responder's error
// as a *ReplyError. ctx is the timeout: when it ends first, Request returns
// an error matching ctx's, and a reply that comes later is dropped (counted
// by LateReplies). The request carries the time left as its expiration, so
// that the broker drops it unread once its caller has given up.
//
// The request is published mandatory, not confirmed (its reply confirms
// it; WithRequestConfirms asks the broker too), with the options in opts (WithRoutingKey, WithHeaders; WithCorrelationID sets
// the request's correlation id, which must be unique among the Requester's
// waiting requests; by default it is the request's message id, a fresh
// UUIDv7). A request no
// queue takes fails at once with ErrUnroutable. When the connection is lost while
// it waits, Request fails with an error matching ErrNoReply and
// ErrUnavailable (direct reply-to: the reply cannot arrive; with
// WithReplyQueue it keeps waiting until ctx ends).
func Request[Req, Rep any](ctx context.Context, r *Requester, reqType *MessageType[Req], repType *MessageType[Rep], exchange string, v Req, opts ...PublishOption) (rep Rep, err error) {
	start := time.Now()
	defer func() { r.c.metrics.Requested(exchange, reqType.Name(), repType.Name(), time.Since(start), err) }()
	var zero Rep
	codec, err := core.CodecFor(reqType, connLink{r.c})
	if err != nil {
		return zero, err
	}
	fp, _ := codec.(interface{ SchemaFingerprint() string })
	cfg := publishConfigOf(opts)
	o, err := encodeOutgoing(ctx, r.c, reqType.Name(), codec, fp, exchange, v, cfg)
	if err != nil {
		return zero, fmt.Errorf("request %s to exchange %q: %w", reqType.Name(), exchange, err)
	}
	o.Msg.Headers[wire.HeaderReplyType] = repType.Name()
	d, err := r.e.Call(ctx, o)
	if err != nil {
		return zero, fmt.Errorf("request %s to exchange %q: %w", reqType.Name(), exchange, err)
	}
	return rpc.DecodeReply(ctx, connLink{r.c}, reqType.Name(), repType, d)
}

// Close stops the Requester: every request still waiting fails with an
// error matching ErrNoReply and ErrClosed, and its channel is closed,
// within ctx. The reply queue of WithReplyQueue is left to its TTL.
func (r *Requester) Close(ctx context.Context) error { return r.e.Close(ctx) }
