package orders

import (
	"fmt"
	"strings"
	"time"
)

// Values are the bench's order in both formats: "1k" has 8 line items
// (about 1 KB of JSON), "100" none (about 100 bytes of Avro). acemqbench
// sends them and bench/codec decodes them (written by hand, not by
// acemq-gen).
func Values(size string) (OrderJSON, OrderAvro) {
	placed := time.Date(2026, 11, 30, 6, 0, 0, 123e6, time.UTC)
	email := "ada.lovelace@example.com"
	note := "leave at the door; ring twice, the bell is loud"
	j := OrderJSON{
		OrderID: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", CustomerID: "C-000042",
		PlacedAt: placed, Status: OrderJSONStatusPlaced, Currency: "EUR",
		Items: []OrderJSONItemsItem{},
	}
	a := OrderAvro{
		OrderID: j.OrderID, CustomerID: j.CustomerID, PlacedAt: placed.Format(time.RFC3339Nano),
		Status: OrderAvroStatusPlaced, Currency: "EUR", Items: []OrderAvroItem{},
	}
	if size == "100" {
		return j, a
	}
	j.Email, j.Note = &email, &note
	a.Email, a.Note = email, note
	for i := range 8 {
		sku := fmt.Sprintf("SKU-%04d", 1000+i)
		name := "line item " + strings.Repeat(string(rune('a'+i)), 40)
		price := 3.25 * float64(i+1)
		j.Items = append(j.Items, OrderJSONItemsItem{Sku: sku, Name: name, Qty: int64(i + 1), Price: price})
		a.Items = append(a.Items, OrderAvroItem{Sku: sku, Name: name, Qty: int32(i + 1), Price: price})
		j.Total += price * float64(i+1)
	}
	a.Total = j.Total
	return j, a
}
