//go:generate go tool acemq-gen -f acemq.yaml

// Command pricing is a pricing service answering quote requests over
// RabbitMQ, and a caller asking it, through the code acemq-gen generated
// from acemq.yaml (docs/request-reply.md): a quote for a known sku comes
// back as a Quote, one for an unknown sku as the responder's
// *runtime.ReplyError, and a caller whose ctx ends first gets ctx's error.
//
//	go run ./examples/pricing
//
// The broker is ACEMQ_URL, else ACEMQ_TEST_URL, else
// amqp://guest:guest@localhost:5672/.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// unitCents is the price list.
var unitCents = map[string]int64{"A-1": 1250, "B-2": 399}

// quote is the responder's handler: the Quote, or a coded error the caller
// receives as a *runtime.ReplyError.
func quote(_ context.Context, m *runtime.Message[QuoteRequested]) (Quote, error) {
	unit, ok := unitCents[m.Payload.Sku]
	if !ok {
		return Quote{}, &runtime.ReplyError{Code: "unknown_sku", Reason: fmt.Sprintf("no price for %q", m.Payload.Sku)}
	}
	return Quote{Sku: m.Payload.Sku, Quantity: m.Payload.Quantity, TotalCents: unit * m.Payload.Quantity}, nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "pricing:", err)
		os.Exit(1)
	}
}

func brokerURL() string {
	for _, k := range []string{"ACEMQ_URL", "ACEMQ_TEST_URL"} {
		if u := os.Getenv(k); u != "" {
			return u
		}
	}
	return "amqp://guest:guest@localhost:5672/"
}

func run(ctx context.Context) error {
	conn, err := runtime.Dial(ctx, brokerURL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := conn.Declare(ctx, Topology()); err != nil {
		return err
	}
	// The pricing service.
	responder, err := ConsumeQuotes(ctx, conn, QuotesHandlerFunc(quote))
	if err != nil {
		return err
	}
	defer responder.Close(context.Background())

	// The caller: each request waits for its reply, ctx the timeout.
	pricing := NewPricingPublisher(conn)
	defer pricing.Close(context.Background())
	for _, req := range []QuoteRequested{{Sku: "A-1", Quantity: 3}, {Sku: "Z-9", Quantity: 1}} {
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		q, err := pricing.RequestQuoteRequested(reqCtx, req)
		cancel()
		var refused *runtime.ReplyError
		switch {
		case errors.As(err, &refused):
			fmt.Printf("%s: refused (%s): %s\n", req.Sku, refused.Code, refused.Reason)
		case err != nil:
			return err
		default:
			fmt.Printf("%s x%d: %d cents\n", q.Sku, q.Quantity, q.TotalCents)
		}
	}
	return nil
}
