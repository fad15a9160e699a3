package codec_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/internal/encodetest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
)

// TestGeneratedEncodersAreMarshal: the encoder acemq-gen wrote for each of
// the bench's JSON message types writes json.Marshal's bytes, or refuses
// what json.Marshal refuses, on 3,000 random values each (most of which
// the encoder writes).
func TestGeneratedEncodersAreMarshal(t *testing.T) {
	check := func(name string, wrote int) {
		t.Helper()
		if wrote < 1000 {
			t.Errorf("%s: the encoder wrote %d of 3000 random values; want 1000 or more (-1: no encoder)", name, wrote)
		}
	}
	check("OrderJSON", encodetest.RandomEncodes(t, orders.TypeOfOrderJSON(), 3000, 1))
	check("PriceOrder", encodetest.RandomEncodes(t, orders.TypeOfPriceOrder(), 3000, 2))
	check("OrderPriced", encodetest.RandomEncodes(t, orders.TypeOfOrderPriced(), 3000, 3))
}

// FuzzPriceOrderEncoder: RR1's request type's encoder against json.Marshal
// on values filled from the fuzzer's bytes.
func FuzzPriceOrderEncoder(f *testing.F) { encodetest.EncodeFuzz(f, orders.TypeOfPriceOrder()) }

// TestCodecEncodesWithTheGeneratedEncoder: the message type's codec gives
// json.Marshal's body for the 1 KB order, as the reference codec does; the
// encoder alone allocates the body and the boxed value (json.Marshal: 3).
func TestCodecEncodesWithTheGeneratedEncoder(t *testing.T) {
	v := orders.PriceOrder(order1K())
	c, err := orders.TypeOfPriceOrder().Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := c.Encode(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	if string(got) != string(want) || len(got) < 1000 {
		t.Fatalf("Encode = %s\nwant %s", got, want)
	}
	allocs := testing.AllocsPerRun(200, func() { _, _, _ = impltest.GeneratedEncode(orders.TypeOfPriceOrder(), v) })
	if allocs > 2 {
		t.Errorf("the encoder of the 1 KB order: %.1f allocations, want at most 2", allocs)
	}
	ref, _ := runtime.NewJSONCodec(orders.TypeOfPriceOrder().Schema())
	if body, err := ref.Encode(ctx, v); err != nil || string(body) != string(want) {
		t.Errorf("the reference codec: %s, %v", body, err)
	}
}

// order1K is acemqbench's 1 KB order (orders.Values), RR1's request.
func order1K() orders.OrderJSON {
	j, _ := orders.Values("1k")
	return j
}

// BenchmarkJSONEncode1K is RR1's request encoded: acemqbench's 1 KB order
// (8 line items) as a PriceOrder, by json.Marshal and by the generated
// message type's codec (its encoder, then its check).
func BenchmarkJSONEncode1K(b *testing.B) {
	v := orders.PriceOrder(order1K())
	b.Run("baseline=json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("codec=generated", func(b *testing.B) {
		c, err := orders.TypeOfPriceOrder().Codec(nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Encode(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
