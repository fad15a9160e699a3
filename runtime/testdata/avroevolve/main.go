// Command avroevolve is one of two services built from two versions of one
// manifest, for the runtime's TestAvroEvolutionBetweenGeneratedServices:
// the producer's service regenerated after adding a nullable field to its
// Avro message (paymentsv2), the consumer's not yet (paymentsv1), no
// registry configured, nothing shared but the broker.
//
//	avroevolve -role publish -url URL -n N   (paymentsv2's publisher)
//	avroevolve -role consume -url URL -n N   (paymentsv1's consumer)
//
// The consumer prints each payload as a JSON line and exits after N.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/testdata/avroevolve/paymentsv1"
	"github.com/acemq/acemq-go/runtime/testdata/avroevolve/paymentsv2"
)

func main() {
	role := flag.String("role", "", "publish or consume")
	url := flag.String("url", "", "broker URL")
	n := flag.Int("n", 1, "messages")
	flag.Parse()
	if err := run(*role, *url, *n); err != nil {
		fmt.Fprintln(os.Stderr, "avroevolve:", err)
		os.Exit(1)
	}
}

func run(role, url string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	switch role {
	case "publish":
		if err := c.Declare(ctx, paymentsv2.Topology()); err != nil {
			return err
		}
		p := paymentsv2.NewPaymentsPublisher(c)
		for i := range n {
			ref := fmt.Sprintf("invoice %d", i+1)
			m := paymentsv2.PaymentRequested{PaymentID: fmt.Sprintf("P-%d", i+1), AmountCents: int64(100 * (i + 1)), Reference: &ref}
			if err := p.PublishPaymentRequested(ctx, m); err != nil {
				return err
			}
		}
		return nil
	case "consume":
		if err := c.Declare(ctx, paymentsv1.Topology()); err != nil {
			return err
		}
		got := make(chan paymentsv1.PaymentRequested, n)
		cs, err := paymentsv1.ConsumePaymentsRequested(ctx, c, paymentsv1.PaymentsRequestedHandlerFunc(
			func(_ context.Context, m *runtime.Message[paymentsv1.PaymentRequested]) runtime.Ack {
				got <- m.Payload
				return runtime.Accept()
			}))
		if err != nil {
			return err
		}
		defer cs.Close(context.Background())
		enc := json.NewEncoder(os.Stdout)
		for range n {
			select {
			case m := <-got:
				if err := enc.Encode(m); err != nil {
					return err
				}
			case <-ctx.Done():
				return fmt.Errorf("waiting for messages: %w", ctx.Err())
			}
		}
		return nil
	}
	return fmt.Errorf("-role %q: want publish or consume", role)
}
