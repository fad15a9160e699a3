package codec_test

import (
	"context"
	"testing"

	"github.com/acemq/acemq-go/bench/orders"
)

// BenchmarkJSONReference1K is the runtime-only JSON type's codec
// (orders.ReferenceOrderJSONType, runtime.NewJSONType: no generated code)
// on acemqbench's 1 KB order, Encode and Decode: what P1-jsonref-async and
// C1-jsonref pay per message for the codec.
func BenchmarkJSONReference1K(b *testing.B) {
	c, err := orders.ReferenceOrderJSONType().Codec(nil)
	if err != nil {
		b.Fatal(err)
	}
	v, _ := orders.Values("1k")
	body, ctx := orderBody(b, "1k"), context.Background()
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Encode(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out orders.OrderJSON
			if err := c.Decode(ctx, body, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
