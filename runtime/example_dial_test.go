package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"syscall"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A service that starts with its broker: Dial keeps trying while the
// broker is not up (logging each attempt at Warn), for as long as ctx
// allows, and fails at once on what waiting cannot fix.
func ExampleDial_waitForTheBroker() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := runtime.Dial(ctx, "amqp://app:secret@rabbitmq:5672/payments")
	switch {
	case errors.Is(err, runtime.ErrAuth):
		var ae *amqp.Error
		if errors.As(err, &ae) {
			log.Fatalf("the broker refused us (%d): fix the credentials or the vhost", ae.Code)
		}
	case errors.Is(err, runtime.ErrUnreachable):
		log.Fatalf("no broker within 2 minutes: %v", err) // the password shows as xxxxx
	case err != nil:
		log.Fatal(err)
	}
	defer conn.Close(context.Background())
}

// The nodes of a cluster: tried in turn on the first dial and on every
// reconnect, starting after the node that was lost.
func ExampleWithAddresses() {
	ctx := context.Background()
	conn, err := runtime.Dial(ctx, "amqp://app:secret@node1:5672/,amqp://app:secret@node2:5672/",
		runtime.WithAddresses("amqp://app:secret@node3:5672/"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	fmt.Println("connected to", conn.Address()) // amqp://app:xxxxx@node1:5672/
}

// What a Dial error keeps: where it tried (password redacted), what kind
// of failure, and the cause.
func ExampleDialError() {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	quiet := runtime.WithLogger(slog.New(slog.DiscardHandler)) // no Warn per attempt here
	_, err := runtime.Dial(ctx, "amqp://guest:s3cret@127.0.0.1:1/", quiet)
	var de *runtime.DialError
	fmt.Println(errors.As(err, &de), de.Address)
	fmt.Println(errors.Is(err, runtime.ErrUnreachable), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// true amqp://guest:xxxxx@127.0.0.1:1/
	// true true true
}

// A panic in a handler is a Retry whose error says what and where.
func ExamplePanicError() {
	err := &runtime.PanicError{Value: "index out of range [3] with length 3", Frame: "orders.handle orders/handle.go:42"}
	fmt.Println(runtime.Retry(err))
	// Output: retry: handler panicked: index out of range [3] with length 3 (at orders.handle orders/handle.go:42)
}
