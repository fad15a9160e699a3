package runtime_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"os"

	"github.com/acemq/acemq-go/runtime"
)

// The consumer's outcome lines as JSON: Info for each retry, Warn for each
// dead letter and park, Error (with the stack) for a handler panic. A
// debugging consumer may add the body, cut at 512 bytes; a production one
// should not.
func ExampleWithBodyInLogs() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	conn, err := runtime.Dial(ctx, "amqp://guest:guest@localhost:5672/", runtime.WithLogger(logger))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	consumer, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{
		Queue: "payments",
		Routes: []runtime.Route{runtime.Handle(paymentReceived,
			func(ctx context.Context, m *runtime.Message[Payment]) runtime.Ack {
				// {"level":"WARN","msg":"acemq: parked",
				//  "broker":"amqp://guest:xxxxx@localhost:5672/","queue":"payments",
				//  "type":"payment.received.v1","id":"…","attempt":1,
				//  "reason":"parked by the handler: unknown account","to":"payments.parked",
				//  "body":"{\"id\":\"P-1\",…}"}
				return runtime.Park(errors.New("unknown account"))
			})},
	}, runtime.WithBodyInLogs(512))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close(ctx)
}
