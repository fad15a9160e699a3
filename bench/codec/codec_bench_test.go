package codec_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
)

// order is a typical order: uuid, email, date-time, enum, pattern, three
// line items with minimums (the runtime's K2 benchmark value, as OrderJSON).
func order() orders.OrderJSON {
	email := "ada@example.com"
	return orders.OrderJSON{
		OrderID: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", CustomerID: "C-42", Email: &email,
		PlacedAt: time.Date(2026, 11, 30, 6, 0, 0, 123e6, time.UTC), Status: orders.OrderJSONStatusPlaced,
		Currency: "EUR", Total: 61.5,
		Items: []orders.OrderJSONItemsItem{
			{Sku: "ABC-1", Name: "a", Qty: 2, Price: 10.25},
			{Sku: "DEF-22", Name: "b", Qty: 1, Price: 30},
			{Sku: "GHI-333", Name: "c", Qty: 4, Price: 2.75},
		},
	}
}

func marshal(b *testing.B) func() {
	v := order()
	return func() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func encodeWith(c runtime.Codec) func(b *testing.B) func() {
	return func(b *testing.B) func() {
		v, ctx := order(), context.Background()
		return func() {
			if _, err := c.Encode(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func generated(b *testing.B) runtime.Codec {
	c, err := orders.TypeOfOrderJSON().Codec(nil)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func reference(b *testing.B) runtime.Codec {
	c, err := runtime.NewJSONCodec(orders.TypeOfOrderJSON().Schema())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkJSONEncodeGenerated is K2 with the generated check:
// json.Marshal, the codec of the generated message type, and
// runtime.NewJSONCodec's (no generated code: the reference validator on
// the parsed body), then ratio: the three
// interleaved, 7 rounds, median x-baseline of each codec.
func BenchmarkJSONEncodeGenerated(b *testing.B) {
	b.Run("baseline=json.Marshal", loop(marshal))
	b.Run("codec=generated", func(b *testing.B) { loop(encodeWith(generated(b)))(b) })
	b.Run("codec=reference", func(b *testing.B) { loop(encodeWith(reference(b)))(b) })
	b.Run("ratio", func(b *testing.B) {
		ratios(b, marshal(b), encodeWith(generated(b))(b), encodeWith(reference(b))(b))
	})
}

func unmarshal(b *testing.B) func() {
	body, _ := json.Marshal(order())
	return func() {
		var v orders.OrderJSON
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func decodeWith(c runtime.Codec) func(b *testing.B) func() {
	return func(b *testing.B) func() {
		body, _ := json.Marshal(order())
		ctx := context.Background()
		return func() {
			var v orders.OrderJSON
			if err := c.Decode(ctx, body, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkJSONDecodeGenerated is K3 with the generated check:
// json.Unmarshal, the generated type's codec (unmarshal, the shape's scan,
// the check) and NewJSONCodec's (parse, validate, unmarshal), then
// ratio as BenchmarkJSONEncodeGenerated's.
func BenchmarkJSONDecodeGenerated(b *testing.B) {
	b.Run("baseline=json.Unmarshal", loop(unmarshal))
	b.Run("codec=generated", func(b *testing.B) { loop(decodeWith(generated(b)))(b) })
	b.Run("codec=reference", func(b *testing.B) { loop(decodeWith(reference(b)))(b) })
	b.Run("ratio", func(b *testing.B) {
		ratios(b, unmarshal(b), decodeWith(generated(b))(b), decodeWith(reference(b))(b))
	})
}

// ratios times base, gen and ref interleaved, 7 rounds (base and gen ten
// times as long as ref, which is slower), and reports the medians.
func ratios(b *testing.B, base, gen, ref func()) {
	n := max(1, int(20*time.Millisecond/max(timeOf(ref, 10)/10, time.Nanosecond)))
	var genR, refR []float64
	for range 7 {
		bt := timeOf(base, 10*n)
		gt := timeOf(gen, 10*n)
		rt := timeOf(ref, n)
		genR = append(genR, float64(gt)/float64(bt))
		refR = append(refR, float64(rt)*10/float64(bt))
	}
	slices.Sort(genR)
	slices.Sort(refR)
	for b.Loop() {
	}
	b.ReportMetric(genR[3], "generated-x-baseline")
	b.ReportMetric(genR[0], "generated-x-min")
	b.ReportMetric(genR[6], "generated-x-max")
	b.ReportMetric(refR[3], "reference-x-baseline")
	b.ReportMetric(refR[0], "reference-x-min")
	b.ReportMetric(refR[6], "reference-x-max")
	b.ReportMetric(0, "ns/op")
}

func loop(op func(b *testing.B) func()) func(*testing.B) {
	return func(b *testing.B) {
		f := op(b)
		b.ReportAllocs()
		for b.Loop() {
			f()
		}
	}
}

func timeOf(f func(), n int) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start)
}
