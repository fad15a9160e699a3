package codec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
)

// order1k is acemqbench's 1 KB order (its orderValues("1k")): eight line
// items, an email and a note.
func order1k() orders.OrderJSON {
	email := "ada.lovelace@example.com"
	note := "leave at the door; ring twice, the bell is loud"
	o := orders.OrderJSON{
		OrderID: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", CustomerID: "C-000042", Email: &email, Note: &note,
		PlacedAt: time.Date(2026, 11, 30, 6, 0, 0, 123e6, time.UTC), Status: orders.OrderJSONStatusPlaced,
		Currency: "EUR", Items: []orders.OrderJSONItemsItem{},
	}
	for i := range 8 {
		price := 3.25 * float64(i+1)
		o.Items = append(o.Items, orders.OrderJSONItemsItem{Sku: fmt.Sprintf("SKU-%04d", 1000+i),
			Name: "line item " + strings.Repeat(string(rune('a'+i)), 40), Qty: int64(i + 1), Price: price})
		o.Total += price * float64(i+1)
	}
	return o
}

// BenchmarkJSONReference1K is the runtime-only JSON type's codec
// (orders.ReferenceOrderJSONType, runtime.NewJSONType: no generated code)
// on acemqbench's 1 KB order, Encode and Decode: what P1-jsonref-async and
// C1-jsonref pay per message for the codec.
func BenchmarkJSONReference1K(b *testing.B) {
	c, err := orders.ReferenceOrderJSONType().Codec(nil)
	if err != nil {
		b.Fatal(err)
	}
	v, ctx := order1k(), context.Background()
	body, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
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
