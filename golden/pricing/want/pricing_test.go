package pricing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/acemq/acemq-go/golden/pricing/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

// quotes answers quote requests at 1250 cents a unit, and refuses an
// unknown sku with a code of its own.
func quotes(_ context.Context, m *runtime.Message[pricing.QuoteRequested]) (pricing.Quote, error) {
	if m.Payload.Sku != "A-1" {
		return pricing.Quote{}, &runtime.ReplyError{Code: "unknown_sku", Reason: fmt.Sprintf("no price for %q", m.Payload.Sku)}
	}
	return pricing.Quote{Sku: m.Payload.Sku, Quantity: m.Payload.Quantity, TotalCents: 1250 * m.Payload.Quantity}, nil
}

// The generated request method and handler: a typed reply, and the
// responder's typed error.
func TestRequestQuote(t *testing.T) {
	ctx, conn := goldentest.Connect(t, pricing.Topology())
	consumer, err := pricing.ConsumeQuotes(ctx, conn, pricing.QuotesHandlerFunc(quotes))
	if err != nil {
		t.Fatalf("ConsumeQuotes: %v", err)
	}
	defer consumer.Close(context.Background())
	p := pricing.NewPricingPublisher(conn)
	defer p.Close(context.Background())

	q, err := p.RequestQuoteRequested(ctx, pricing.QuoteRequested{Sku: "A-1", Quantity: 3})
	if err != nil {
		t.Fatalf("RequestQuoteRequested: %v", err)
	}
	if want := (pricing.Quote{Sku: "A-1", Quantity: 3, TotalCents: 3750}); q != want {
		t.Errorf("quote %+v, want %+v", q, want)
	}

	_, err = p.RequestQuoteRequested(ctx, pricing.QuoteRequested{Sku: "Z-9", Quantity: 1})
	var re *runtime.ReplyError
	if !errors.As(err, &re) || re.Code != "unknown_sku" || re.Reason != `no price for "Z-9"` || re.Request != "pricing.quote.requested.v1" {
		t.Fatalf("err = %v (%+v), want the responder's unknown_sku", err, re)
	}

	// A request that breaks its schema is never sent.
	if _, err := p.RequestQuoteRequested(ctx, pricing.QuoteRequested{Sku: "A-1", Quantity: 0}); !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Fatalf("quantity 0: err = %v, want ErrInvalidMessage", err)
	}
}

// A queue's reply: makes what it consumes a request: RequestStockAsked
// and a handler returning the Stock, as a message's own reply: does.
func TestRequestByQueueReply(t *testing.T) {
	ctx, conn := goldentest.Connect(t, pricing.Topology())
	consumer, err := pricing.ConsumeStockChecks(ctx, conn, pricing.StockChecksHandlerFunc(
		func(_ context.Context, m *runtime.Message[pricing.StockAsked]) (pricing.Stock, error) {
			return pricing.Stock{Sku: m.Payload.Sku, Available: 7}, nil
		}))
	if err != nil {
		t.Fatalf("ConsumeStockChecks: %v", err)
	}
	defer consumer.Close(context.Background())
	p := pricing.NewPricingPublisher(conn)
	defer p.Close(context.Background())
	s, err := p.RequestStockAsked(ctx, pricing.StockAsked{Sku: "A-1"})
	if err != nil {
		t.Fatalf("RequestStockAsked: %v", err)
	}
	if want := (pricing.Stock{Sku: "A-1", Available: 7}); s != want {
		t.Errorf("stock %+v, want %+v", s, want)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, pricing.TypeOfQuoteRequested(), pricing.QuoteRequested{Sku: "A-1", Quantity: 3})
	goldentest.RoundTrip(t, pricing.TypeOfQuote(), pricing.Quote{Sku: "A-1", Quantity: 3, TotalCents: 3750})
	goldentest.RoundTrip(t, pricing.TypeOfPriceChanged(), pricing.PriceChanged{Sku: "A-1", UnitCents: 1250})
	goldentest.RoundTrip(t, pricing.TypeOfStockAsked(), pricing.StockAsked{Sku: "A-1"})
	goldentest.RoundTrip(t, pricing.TypeOfStock(), pricing.Stock{Sku: "A-1", Available: 7})
}
