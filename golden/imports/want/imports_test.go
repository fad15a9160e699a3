package imports_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/golden/imports/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

type handler struct {
	prices chan *runtime.Message[imports.PriceChanged]
	stock  chan *runtime.Message[imports.StockLow]
}

func (h *handler) HandlePriceChanged(_ context.Context, m *runtime.Message[imports.PriceChanged]) runtime.Ack {
	h.prices <- m
	return runtime.Accept()
}

func (h *handler) HandleStockLow(_ context.Context, m *runtime.Message[imports.StockLow]) runtime.Ack {
	h.stock <- m
	return runtime.Accept()
}

// The imported messages go out through this manifest's publisher to the
// imported exchange (declared by this manifest's Topology) and come back,
// typed, on this manifest's queue: the Avro one and the JSON Schema one
// whose schema the producer's $ref'd file was bundled into.
func TestImportedMessagesRoundTheBroker(t *testing.T) {
	ctx, conn := goldentest.Connect(t, imports.Topology())
	h := &handler{prices: make(chan *runtime.Message[imports.PriceChanged], 1), stock: make(chan *runtime.Message[imports.StockLow], 1)}
	consumer, err := imports.ConsumePrices(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumePrices: %v", err)
	}
	defer consumer.Close(context.Background())
	pub := imports.NewRelayPublisher(conn)
	price := imports.PriceChanged{Sku: "SKU-1", Cents: 1299}
	if err := pub.PublishPriceChanged(ctx, price); err != nil {
		t.Fatalf("PublishPriceChanged: %v", err)
	}
	stock := imports.StockLow{Sku: "SKU-1", Left: 2}
	if err := pub.PublishStockLow(ctx, stock); err != nil {
		t.Fatalf("PublishStockLow: %v", err)
	}
	p := goldentest.Receive(t, h.prices, "PriceChanged")
	if !reflect.DeepEqual(p.Payload, price) || p.RoutingKey != "price.changed" {
		t.Errorf("PriceChanged %+v by %q, want %+v by price.changed", p.Payload, p.RoutingKey, price)
	}
	goldentest.CheckEnvelope(t, p.Envelope, "golden.price.changed.v1")
	s := goldentest.Receive(t, h.stock, "StockLow")
	if !reflect.DeepEqual(s.Payload, stock) || s.RoutingKey != "price.stock" {
		t.Errorf("StockLow %+v by %q, want %+v by price.stock", s.Payload, s.RoutingKey, stock)
	}
	goldentest.CheckEnvelope(t, s.Envelope, "golden.stock.low.v1")
	// The producer's $ref'd sku.json travels in the bundle: an empty sku
	// is refused on publish, as the producer refuses it.
	if err := pub.PublishStockLow(ctx, imports.StockLow{Sku: "", Left: 1}); err == nil {
		t.Error("PublishStockLow with an empty sku: no error, want the bundled sku.json's minLength")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, imports.TypeOfPriceChanged(), imports.PriceChanged{Sku: "SKU-1", Cents: 1299})
	goldentest.RoundTrip(t, imports.TypeOfStockLow(), imports.StockLow{Sku: "SKU-1", Left: 2})
}
