package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// timeout bounds each message's handler by d: the handler's ctx ends after
// d, and a handler that gave up on it is a Retry saying so.
func timeout(d time.Duration) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			a := next(ctx, m)
			if a.Kind() == runtime.AckRetry && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return runtime.Retry(fmt.Errorf("timed out after %s: %w", d, a.Err()))
			}
			return a
		}
	}
}

// A per-message timeout. In a service it is installed with
// runtime.WithMiddleware(timeout(5*time.Second)) on Dial or on a consumer;
// here it wraps a HandlerFunc directly, to show what it does.
func ExampleMiddleware_timeout() {
	slow := timeout(20 * time.Millisecond)(func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
		select {
		case <-time.After(time.Minute): // the stock service, not answering
			return runtime.Accept()
		case <-ctx.Done():
			return runtime.Retry(ctx.Err())
		}
	})
	fmt.Println(slow(context.Background(), &runtime.Incoming{}))
	// Output: retry: timed out after 20ms: context deadline exceeded
}

type tenantKey struct{}

// tenantOf is the tenant the tenant middleware put in ctx.
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// tenant reads the "tenant" header into ctx; a message without one is
// parked, its handler never called.
func tenant(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
		t, _ := m.Headers["tenant"].(string)
		if t == "" {
			return runtime.Park(fmt.Errorf("no tenant header on %s", m.Queue))
		}
		return next(context.WithValue(ctx, tenantKey{}, t), m)
	}
}

// The tenant from a header into ctx, where every handler reads it.
func ExampleMiddleware_tenant() {
	h := tenant(func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
		fmt.Println("handling for", tenantOf(ctx))
		return runtime.Accept()
	})
	fmt.Println(h(context.Background(), &runtime.Incoming{Queue: "payments", Headers: map[string]any{"tenant": "acme"}}))
	fmt.Println(h(context.Background(), &runtime.Incoming{Queue: "payments"}))
	// Output:
	// handling for acme
	// accept
	// park: no tenant header on payments
}

// Middlewares on the connection run around every consumer's handlers,
// outside those of a consumer; each list runs in the order given, the
// first outermost. A generated Consume… function takes them in its opts.
func ExampleWithMiddleware() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/",
		runtime.WithMiddleware(tenant))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	consumer, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue: "payments",
		Routes: []runtime.Route{runtime.Handle(paymentReceived,
			func(ctx context.Context, m *runtime.Message[Payment]) runtime.Ack {
				log.Printf("payment %s for tenant %s", m.Payload.ID, tenantOf(ctx))
				return runtime.Accept()
			})},
	}, runtime.WithMiddleware(timeout(5*time.Second)))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close(ctx)
}
