package runtime

import "context"

// DefaultMaxBodySize is the largest body a consumer decodes unless
// WithMaxBodySize says otherwise: 1 MiB. A larger body is parked unread.
const DefaultMaxBodySize = 1 << 20

// decodeInfo is what a consumer tells a codec about the delivery it
// decodes, beyond its body: the writer schema's fingerprint from the
// x-acemq-schema-fingerprint header, and the consumer's body limit (the
// Avro decoder's string, bytes and array limits are set to match).
type decodeInfo struct {
	fingerprint string
	maxBody     int
	// checkRequester is the consumer's WithRequesterCheck, for its
	// request routes (HandleRequest).
	checkRequester bool
}

type decodeInfoKey struct{}

func withDecodeInfo(ctx context.Context, info decodeInfo) context.Context {
	return context.WithValue(ctx, decodeInfoKey{}, info)
}

// decodeInfoOf returns the delivery's decode info; a plain Decode call (no
// consumer) gets no fingerprint and the default limit.
func decodeInfoOf(ctx context.Context) decodeInfo {
	info, _ := ctx.Value(decodeInfoKey{}).(decodeInfo)
	if info.maxBody <= 0 {
		info.maxBody = DefaultMaxBodySize
	}
	return info
}
