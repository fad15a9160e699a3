package acemqtest_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

var text = runtime.NewTextType("acemqtest.text")

// queueExists asks the broker, with a passive declare on a fresh channel.
func queueExists(t *testing.T, vhostURL, q string) bool {
	t.Helper()
	conn, err := amqp.Dial(vhostURL)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.QueueDeclarePassive(q, false, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("passive declare %s: %v", q, err)
	}
	ch.Close()
	return true
}

// Queue gives the test its own names and deletes them, rungs included.
func TestQueueIsTheTestsOwn(t *testing.T) {
	var q string
	t.Run("inner", func(t *testing.T) {
		c := acemqtest.Dial(t)
		q = acemqtest.Queue(t, "orders")
		if !strings.HasPrefix(q, "test.orders.") {
			t.Errorf("queue name %q", q)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		policy := runtime.Fixed(2, time.Second).WithWaitInBrokerFrom(time.Second)
		if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy})); err != nil {
			t.Fatal(err)
		}
		got := make(chan *runtime.Message[string], 1)
		_, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(text, func(_ context.Context, m *runtime.Message[string]) runtime.Ack {
				got <- m
				return runtime.Reject(errors.New("no"))
			})}})
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.Publish(ctx, c, text, "", "hello", runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m.Payload != "hello" {
				t.Errorf("payload %q", m.Payload)
			}
		case <-ctx.Done():
			t.Fatal("nothing consumed")
		}
		for _, name := range []string{q, q + ".dlq", q + ".parked", q + ".retry.1s"} {
			if !queueExists(t, acemqtest.URL(), name) {
				t.Errorf("%s missing during the test", name)
			}
		}
	})
	for _, name := range []string{q, q + ".dlq", q + ".parked", q + ".retry.1s"} {
		if queueExists(t, acemqtest.Require(t), name) {
			t.Errorf("%s still exists after the test", name)
		}
	}
}

// DialVHost gives each test a vhost of its own: two tests can use the same
// fixed queue name, as generated code does, without meeting.
func TestDialVHostIsolates(t *testing.T) {
	acemqtest.Require(t) // the inner test skipping would leave vhost empty
	var vhost string
	t.Run("inner", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		a, b := acemqtest.DialVHost(t), acemqtest.DialVHost(t)
		top := runtime.NewTopology().Queue(runtime.Queue{Name: "orders.new"})
		for _, c := range []*runtime.Connection{a, b} {
			if err := c.Declare(ctx, top); err != nil {
				t.Fatal(err)
			}
		}
		if err := runtime.Publish(ctx, a, text, "", "only in a", runtime.WithRoutingKey("orders.new")); err != nil {
			t.Fatal(err)
		}
		na, err := a.MessageCount(ctx, "orders.new")
		if err != nil {
			t.Fatal(err)
		}
		nb, err := b.MessageCount(ctx, "orders.new")
		if err != nil {
			t.Fatal(err)
		}
		if na != 1 || nb != 0 {
			t.Errorf("orders.new holds %d in a's vhost and %d in b's; want 1 and 0", na, nb)
		}
		vhost = acemqtest.VHost(t)
	})
	// The vhost is gone after the test: dialling it is refused.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, vhost)
	if err == nil {
		c.Close(ctx)
		u, _ := url.Parse(vhost)
		t.Fatalf("vhost %s still exists after the test", u.Path)
	}
	if !errors.Is(err, runtime.ErrAuth) {
		t.Errorf("dial a deleted vhost: %v; want ErrAuth (530)", err)
	}
}
