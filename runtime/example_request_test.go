package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

type QuoteRequest struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type Quote struct {
	SKU        string `json:"sku"`
	TotalCents int64  `json:"total_cents"`
}

var (
	quoteRequested = runtime.NewJSONType[QuoteRequest]("pricing.quote.requested.v1", `{"type": "object", "required": ["sku", "qty"]}`)
	quoteGiven     = runtime.NewJSONType[Quote]("pricing.quote.v1", `{"type": "object", "required": ["sku", "total_cents"]}`)
)

// Request and reply without code generation: a responder answering quote
// requests on the queue "pricing.quotes", and a Requester asking it over
// direct reply-to, ctx being the timeout. docs/request-reply.md has the
// generated form.
func ExampleRequest() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: "pricing.quotes"})); err != nil {
		log.Fatal(err)
	}

	// The responder: a consumer whose route answers each request.
	responder, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue: "pricing.quotes",
		Routes: []runtime.Route{runtime.HandleRequest(quoteRequested, quoteGiven,
			func(ctx context.Context, m *runtime.Message[QuoteRequest]) (Quote, error) {
				if m.Payload.SKU != "A-1" {
					return Quote{}, &runtime.ReplyError{Code: "unknown_sku", Reason: "no price for " + m.Payload.SKU}
				}
				return Quote{SKU: "A-1", TotalCents: int64(m.Payload.Qty) * 1250}, nil
			})},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer responder.Close(context.Background())

	// The caller: one Requester per connection is enough.
	r := runtime.NewRequester(conn)
	defer r.Close(context.Background())
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	q, err := runtime.Request(ctx, r, quoteRequested, quoteGiven, "", QuoteRequest{SKU: "A-1", Qty: 3},
		runtime.WithRoutingKey("pricing.quotes"))
	var refused *runtime.ReplyError
	switch {
	case errors.As(err, &refused):
		fmt.Println("refused:", refused.Code, refused.Reason)
	case err != nil:
		log.Fatal(err) // no reply in time, or the connection was lost
	default:
		fmt.Println(q.SKU, q.TotalCents)
	}
}
