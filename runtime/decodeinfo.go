package runtime

import (
	"context"
	"time"
)

// DefaultMaxBodySize is the largest body a consumer decodes unless
// WithMaxBodySize says otherwise: 1 MiB. A larger body is parked unread.
const DefaultMaxBodySize = 1 << 20

// decodeInfo is what a consumer tells a codec about the delivery it
// decodes, beyond its body: the writer schema's fingerprint from the
// x-acemq-schema-fingerprint header, and the consumer's body limit (the
// Avro decoder's string, bytes and array limits are set to match).
type decodeInfo struct {
	fingerprint string
	// schema is the writer schema the message carries (x-acemq-schema).
	schema  string
	maxBody int
	// checkRequester is the consumer's WithRequesterCheck, for its
	// request routes (HandleRequest).
	checkRequester bool
	// received is when the consumer took the delivery from its channel
	// (ReceivedAt).
	received time.Time
	// replyTo is the consumer's WithReplyToAllowed (nil: the default
	// rule), for its request routes.
	replyTo *replyToRule
	// queue is the consumer's, for what its request routes count.
	queue string
}

type decodeInfoKey struct{}

func withDecodeInfo(ctx context.Context, info decodeInfo) context.Context {
	return context.WithValue(ctx, decodeInfoKey{}, info)
}

// infoCtx is a context carrying a delivery's decode info, as
// withDecodeInfo's does; a consumer keeps it in the delivery's own struct
// (delivery.go), so that it costs no allocation of its own: a
// context.WithValue would cost two a delivery (the context and the boxed
// info), and a consumer makes two of them, the decode's and the
// handler's.
type infoCtx struct {
	context.Context
	info decodeInfo
}

// Value is the info's address for decodeInfoKey (no boxing of it), else
// the parent's value.
func (c *infoCtx) Value(key any) any {
	if _, ok := key.(decodeInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// of sets c to parent with info, and returns it.
func (c *infoCtx) of(parent context.Context, info decodeInfo) context.Context {
	c.Context, c.info = parent, info
	return c
}

// decodeInfoOf returns the delivery's decode info; a plain Decode call (no
// consumer) gets no fingerprint and the default limit.
func decodeInfoOf(ctx context.Context) decodeInfo {
	var info decodeInfo
	switch v := ctx.Value(decodeInfoKey{}).(type) {
	case decodeInfo:
		info = v
	case *decodeInfo:
		info = *v
	}
	if info.maxBody <= 0 {
		info.maxBody = DefaultMaxBodySize
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
	case decodeInfo:
		at = v.received
	case *decodeInfo:
		at = v.received
	}
	return at, !at.IsZero()
}
