package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Two copies of one message (same id, same target) returned while an
// earlier publish of that id waits for the broker's disk: each copy must be
// reported unroutable, and the original confirmed. A return names no
// delivery tag, so a matcher that marks the same publish twice reports one
// copy as confirmed — an ack before a safe copy.
func TestReturnsOfOneMessageAreEachReported(t *testing.T) {
	url := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	q := brokertest.Queue(t, "returns")
	if err := c.Declare(ctx, NewTopology().Queue(Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 100_000)
	for round := range 10 {
		var out []amqpx.Outgoing
		for range 5 {
			out = append(out, amqpx.Outgoing{Key: q, Mandatory: true, Msg: amqp.Publishing{
				MessageId: "same-id", DeliveryMode: amqp.Persistent, Body: []byte(big)}})
		}
		for range 2 {
			out = append(out, amqpx.Outgoing{Key: q + ".missing", Mandatory: true, Msg: amqp.Publishing{
				MessageId: "same-id", Body: []byte("copy")}})
		}
		errs := c.publishAll(ctx, true, out)
		for i, err := range errs {
			want := i >= 5
			if got := errors.Is(err, ErrUnroutable); got != want {
				t.Fatalf("round %d, publish %d: err %v, want unroutable=%v", round, i, err, want)
			}
		}
	}
}
