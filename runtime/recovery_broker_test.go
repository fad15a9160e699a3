package runtime_test

// Why the runtime reconnects with fresh connections and channels and not
// with amqp091-go's Config.Recovery (doc.go, docs/design.md rule 7),
// checked against the amqp091-go in go.mod.

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestAMQP091RecoveryReusesDeliveryTags: with amqp091-go's own recovery
// (v1.17 too) a recovered channel numbers its deliveries from 1 again, so
// a tag held across the reconnect names another message after it: here
// tag 1 was "one" (acked before the loss) and is "two" after the
// recovery, which was tag 2 when it was taken; a late ack of "one", or
// the ack of "two" by its old tag, would settle the wrong message. When
// this test fails, amqp091-go keeps tags apart across a recovery and rule
// 7 may be revisited.
func TestAMQP091RecoveryReusesDeliveryTags(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "recovery.tags")
	rawQueue(t, q, nil)
	for _, body := range []string{"one", "two"} {
		rawPublish(t, q, amqp.Publishing{Body: []byte(body)})
	}

	var mu sync.Mutex
	var socks []net.Conn
	cfg := amqp.Config{
		Dial: func(network, addr string) (net.Conn, error) {
			c, err := net.DialTimeout(network, addr, 10*time.Second)
			if err == nil {
				mu.Lock()
				socks = append(socks, c)
				mu.Unlock()
			}
			return c, err
		},
		Recovery: &amqp.Recovery{ReconnectionConfig: &amqp.ReconnectionConfig{MaxRetryCount: 20, RetryInterval: 100 * time.Millisecond}},
	}
	conn, err := amqp.DialConfig(brokertest.URL(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(q, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) amqp.Delivery {
		t.Helper()
		select {
		case d, ok := <-deliveries:
			if !ok {
				t.Fatalf("%s: the delivery channel closed (amqp091-go no longer recovers a consumer in place)", what)
			}
			return d
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: no delivery in 15s", what)
		}
		return amqp.Delivery{}
	}
	one, two := next("first delivery"), next("second delivery")
	if err := one.Ack(false); err != nil {
		t.Fatal(err)
	}
	// A call on the channel after the ack: the broker has had the ack.
	if _, err := ch.QueueDeclarePassive(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}

	// Lose the connection from the client's side (our own socket only).
	mu.Lock()
	_ = socks[0].Close()
	mu.Unlock()

	again := next("delivery after the recovery")
	t.Logf("before: %q tag %d, %q tag %d; after the recovery: %q tag %d (redelivered %v)",
		one.Body, one.DeliveryTag, two.Body, two.DeliveryTag, again.Body, again.DeliveryTag, again.Redelivered)
	if string(again.Body) != "two" || again.DeliveryTag != one.DeliveryTag {
		t.Errorf("after amqp091-go's recovery %q came with tag %d (before: %q was tag %d): tags no longer restart, rule 7's reason is gone",
			again.Body, again.DeliveryTag, one.Body, one.DeliveryTag)
	}
	_ = again.Ack(false)
}
