package runtime_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A basic.return names no delivery tag: the publisher matches it to a
// publish in flight by message id, exchange and routing key. Two copies
// in flight on one channel can share all three (the same message twice on
// a dead-letter queue, replayed through one exchange and key): here a
// headers exchange routes the first (a large body, whose confirm waits for
// the broker's disk) and not the second (small, returned at once, before
// the first's confirm). The return must fail the second copy, not the
// first: the first is moved, the second stays on the source. Matched to
// the oldest copy in flight, the return failed the first (its original
// went back to the source, a duplicate of what the target got) and passed
// the second (its original acked, its copy returned: lost).
func TestReturnOfOneOfTwoCopiesSharingIDExchangeAndKey(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "returns-twins")
	dlq := wire.DeadLetterQueue(q)
	rawQueue(t, q, nil)
	rawQueue(t, dlq, nil)
	ex := rawExchange(t, amqp.ExchangeHeaders)
	if err := rawChannel(t).QueueBind(q, "", ex, false, amqp.Table{"x-match": "all", "route": "yes"}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("b"), 16<<20)
	routed := deadLetter("twin", "", q, 1, "boom")
	routed.Body, routed.Headers["route"] = big, "yes"
	returned := deadLetter("twin", "small", q, 1, "boom")
	returned.Headers["route"] = "no"
	rawPublish(t, dlq, routed)
	rawPublish(t, dlq, returned)
	waitDepth(t, dlq, 2, wait)

	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Exchange: ex, RoutingKey: "k"})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if res.Moved != 1 || res.Failed != 1 || len(res.Failures) != 1 || !errors.Is(res.Failures[0], runtime.ErrUnroutable) {
		t.Fatalf("result %q %+v, want one moved and one failed as unroutable", res, res.Failures)
	}
	on := func(queue string) [][]byte {
		var bodies [][]byte
		for _, d := range drain(t, queue, depth(t, queue), wait) {
			bodies = append(bodies, d.Body)
		}
		return bodies
	}
	if got := on(q); len(got) != 1 || !bytes.Equal(got[0], big) {
		t.Errorf("%s holds %d messages (%v), want the routed copy only", q, len(got), sizes(got))
	}
	if got := on(dlq); !slices.EqualFunc(got, [][]byte{[]byte("small")}, bytes.Equal) {
		t.Errorf("%s holds %d messages (%v), want the returned one only (the other is on %s)", dlq, len(got), sizes(got), q)
	}
}

func sizes(bodies [][]byte) []int {
	out := make([]int, len(bodies))
	for i, b := range bodies {
		out[i] = len(b)
	}
	return out
}
