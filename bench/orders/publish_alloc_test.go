package orders_test

import (
	"context"
	"testing"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// A generated publisher's method costs no allocation beyond the
// runtime.Publish it stands for, with no option and with the options a
// producer gives (its own message id, a correlation id): it publishes to
// the manifest's exchange with the manifest's routing key without building
// a slice of options for the call. (Before issue 38 each method appended
// its routing key and opts into a new slice, one allocation a publish as
// soon as opts held anything.)
func TestGeneratedPublishAllocatesNothingOfItsOwn(t *testing.T) {
	c := acemqtest.DialVHost(t)
	ctx := context.Background()
	if err := c.Declare(ctx, orders.Topology()); err != nil {
		t.Fatal(err)
	}
	p := orders.NewBenchPublisher(c)
	v, _ := orders.Values("1k")
	id, corr := runtime.WithMessageID("order-placed:A-1"), runtime.WithCorrelationID("A-1")
	key := runtime.WithRoutingKey("json")
	for _, tc := range []struct {
		name            string
		publish, direct func() error
	}{
		{"no options",
			func() error { return p.PublishOrderJSON(ctx, v) },
			func() error { return runtime.Publish(ctx, c, orders.TypeOfOrderJSON(), "bench", v, key) }},
		{"a message id",
			func() error { return p.PublishOrderJSON(ctx, v, id) },
			func() error { return runtime.Publish(ctx, c, orders.TypeOfOrderJSON(), "bench", v, key, id) }},
		{"an id and a correlation id",
			func() error { return p.PublishOrderJSON(ctx, v, id, corr) },
			func() error { return runtime.Publish(ctx, c, orders.TypeOfOrderJSON(), "bench", v, key, id, corr) }},
	} {
		publish := func() {
			if err := tc.publish(); err != nil {
				t.Fatal(err)
			}
		}
		direct := func() {
			if err := tc.direct(); err != nil {
				t.Fatal(err)
			}
		}
		publish()
		direct()
		// The broker's confirms and the reader goroutine allocate too, in
		// both: compare the averages of many publishes.
		const runs = 300
		want := testing.AllocsPerRun(runs, direct)
		got := testing.AllocsPerRun(runs, publish)
		t.Logf("%s: PublishOrderJSON %.2f allocations a publish, runtime.Publish %.2f", tc.name, got, want)
		if got > want+0.5 {
			t.Errorf("%s: PublishOrderJSON allocates %.2f a publish, runtime.Publish with the same options %.2f", tc.name, got, want)
		}
	}
}

// BenchmarkGeneratedPublish: PublishOrderJSON with a message id, and the
// same publish as the method was written before issue 38 (its routing key
// and opts appended into a new slice a call), in the same run: allocs/op
// and B/op say what the append cost (the broker's round trip dominates
// ns/op).
func BenchmarkGeneratedPublish(b *testing.B) {
	c := acemqtest.DialVHost(b)
	ctx := context.Background()
	if err := c.Declare(ctx, orders.Topology()); err != nil {
		b.Fatal(err)
	}
	p := orders.NewBenchPublisher(c)
	v, _ := orders.Values("1k")
	id := runtime.WithMessageID("order-placed:A-1")
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := p.PublishOrderJSON(ctx, v, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		publish := func(opts ...runtime.PublishOption) error {
			return runtime.Publish(ctx, c, orders.TypeOfOrderJSON(), "bench", v,
				append([]runtime.PublishOption{runtime.WithRoutingKey("json")}, opts...)...)
		}
		for b.Loop() {
			if err := publish(id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
