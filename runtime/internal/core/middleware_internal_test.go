package core

import (
	"context"
	"testing"
)

// BenchmarkMiddlewareChain is what three no-op middlewares add to a
// handler call, without the broker: the chain's own cost per message (the
// Incoming built, three calls, the Message[T] filled back), next to a
// handler called directly. bench/'s M1 case is the same on the broker, as
// a throughput ratio:
//
//	go test -run '^$' -bench MiddlewareChain -benchmem ./runtime/internal/core/
func BenchmarkMiddlewareChain(b *testing.B) {
	h := func(ctx context.Context, m *Message[string]) Ack { return Accept() }
	noop := func(next HandlerFunc) HandlerFunc {
		return func(ctx context.Context, m *Incoming) Ack { return next(ctx, m) }
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		h    Handler[string]
	}{
		{"direct", h},
		{"3-noop", chain("q", []Middleware{noop, noop, noop}, h)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			m := &Message[string]{Payload: "order", Headers: map[string]any{"tenant": "t"}}
			for b.Loop() {
				if a := invoke(ctx, bc.h, m); a.Kind() != AckAccept {
					b.Fatal(a)
				}
			}
		})
	}
}
