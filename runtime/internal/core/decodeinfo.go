package core

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"
)

// DefaultMaxBodySize is the largest body a consumer decodes unless
// WithMaxBodySize says otherwise: 1 MiB. A larger body is parked unread.
const DefaultMaxBodySize = 1 << 20

// DecodeInfo is what a consumer tells a codec about the delivery it
// decodes, beyond its body: the writer schema's fingerprint from the
// x-acemq-schema-fingerprint header, and the consumer's body limit (the
// Avro decoder's string, bytes and array limits are set to match).
type DecodeInfo struct {
	Fingerprint string
	// schema is the writer schema the message carries (x-acemq-schema).
	Schema  string
	MaxBody int
	// checkRequester is the consumer's WithRequesterCheck, for its
	// request routes (HandleRequest).
	CheckRequester bool
	// received is when the consumer took the delivery from its channel
	// (ReceivedAt).
	Received time.Time
	// replyTo is the consumer's WithReplyToAllowed (nil: the default
	// rule), for its request routes.
	ReplyTo *ReplyToRule
	// queue is the consumer's, for what its request routes count.
	Queue string
}

type decodeInfoKey struct{}

func WithDecodeInfo(ctx context.Context, info DecodeInfo) context.Context {
	return context.WithValue(ctx, decodeInfoKey{}, info)
}

// InfoCtx is a context carrying a delivery's decode info, as
// WithDecodeInfo's does; a consumer keeps it in the delivery's own struct
// (delivery.go), so that it costs no allocation of its own: a
// context.WithValue would cost two a delivery (the context and the boxed
// info), and a consumer makes two of them, the decode's and the
// handler's.
type InfoCtx struct {
	context.Context
	info DecodeInfo
}

// Value is the info's address for decodeInfoKey (no boxing of it), else
// the parent's value.
func (c *InfoCtx) Value(key any) any {
	if _, ok := key.(decodeInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// Of sets c to parent with info, and returns it.
func (c *InfoCtx) Of(parent context.Context, info DecodeInfo) context.Context {
	c.Context, c.info = parent, info
	return c
}

// DecodeInfoOf returns the delivery's decode info; a plain Decode call (no
// consumer) gets no fingerprint and the default limit.
func DecodeInfoOf(ctx context.Context) DecodeInfo {
	var info DecodeInfo
	switch v := ctx.Value(decodeInfoKey{}).(type) {
	case DecodeInfo:
		info = v
	case *DecodeInfo:
		info = *v
	}
	if info.MaxBody <= 0 {
		info.MaxBody = DefaultMaxBodySize
	}
	return info
}

// ReceivedAt is when the consumer received from the broker the delivery
// whose handler (or middleware) ctx is, and true; outside a consumer's
// handler it is the zero time and false. From then on the delivery is
// unacknowledged, whatever waits before its handler runs (the deliveries
// ahead of it in the prefetch): a middleware that holds a delivery (for a
// store that does not answer, as pgstore's inbox and redisstore's dedup
// do) bounds the hold from here, so that the last delivery of a full
// prefetch stays under the broker's consumer timeout as the first does.
func ReceivedAt(ctx context.Context) (time.Time, bool) {
	var at time.Time
	switch v := ctx.Value(decodeInfoKey{}).(type) {
	case DecodeInfo:
		at = v.Received
	case *DecodeInfo:
		at = v.Received
	}
	return at, !at.IsZero()
}

// ReplyToRule is what a responder replies to besides direct reply-to
// addresses and wire.ReplyQueuePrefix's queues: WithReplyToAllowed's names and
// prefixes. A nil rule allows those two alone.
type ReplyToRule struct {
	Names, Prefixes []string
}

// Allows reports whether a reply may go to replyTo.
func (r *ReplyToRule) Allows(replyTo string) bool {
	if strings.HasPrefix(replyTo, DirectReplyTo+".") || strings.HasPrefix(replyTo, wire.ReplyQueuePrefix) {
		return true
	}
	if r == nil {
		return false
	}
	if slices.Contains(r.Names, replyTo) {
		return true
	}
	for _, p := range r.Prefixes {
		if strings.HasPrefix(replyTo, p) {
			return true
		}
	}
	return false
}

// String is the rule's names and prefixes, as a reason lists them: ""
// for none.
func (r *ReplyToRule) String() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, n := range r.Names {
		b.WriteString(", " + n)
	}
	for _, p := range r.Prefixes {
		b.WriteString(", " + p + "*")
	}
	return b.String()
}

// DirectReplyTo is RabbitMQ's pseudo-queue for direct reply-to.
const DirectReplyTo = "amq.rabbitmq.reply-to"

// HasDecodeInfo reports whether ctx carries a delivery's decode info.
func HasDecodeInfo(ctx context.Context) bool { return ctx.Value(decodeInfoKey{}) != nil }

// Info is the decode info c carries.
func (c *InfoCtx) Info() DecodeInfo { return c.info }
