package consume

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A requeue (WithRequeueOnFailure) hands the broker back the bytes it had,
// so x-acemq-attempt cannot advance with it. The attempt of a requeued
// delivery is therefore x-acemq-attempt plus the times it was handed back
// as failed: the broker's x-delivery-count on a queue known to be quorum,
// or said to be by the consumer's spec (queuetype.go; shared by every
// consumer, kept across restarts: the
// requeue is a basic.reject, which every RabbitMQ counts, 4.3 included),
// else this consumer's own count (a classic queue counts nothing, and its
// x-delivery-count is whatever the producer wrote: a fleet of n consumers
// may each spend the policy's attempts, and a restart forgets).

// headerDeliveryCount is the quorum queue's count of failed deliveries
// (absent on the first delivery on RabbitMQ 4, 0 on 3.10; on 4.3 a
// basic.nack does not count, a basic.reject and a closed channel do).
const headerDeliveryCount = wire.HeaderDeliveryCount

// requeueAttempt is the attempt a delivery of a requeue_on_failure
// consumer is on.
func (dv *delivery) requeueAttempt() int {
	var n int
	switch {
	case dv.brokerCounts():
		n = int(core.PositiveInt(dv.d.Headers[headerDeliveryCount], 0))
	case dv.quorumSaid():
		// The spec's word: the broker's count, never below this
		// consumer's own (a classic queue said to be quorum still ends).
		n = max(int(core.PositiveInt(dv.d.Headers[headerDeliveryCount], 0)), dv.cs.requeues.count(requeueKey(dv.d, dv.env)))
	default:
		n = dv.cs.requeues.count(requeueKey(dv.d, dv.env))
	}
	return min(dv.env.Attempt+n, maxAttempt)
}

// maxAttempt bounds an attempt number read from the wire.
const maxAttempt = 1<<31 - 1

// requeueKey names a message across its requeues: its id, else its body.
func requeueKey(d amqp.Delivery, env core.Envelope) string {
	if env.ID != "" {
		return env.ID
	}
	sum := sha256.Sum256(d.Body)
	return "body:" + hex.EncodeToString(sum[:16])
}

// maxRequeueCounts bounds the memory of requeueCounts; the oldest entries
// go first (their messages went to another consumer, or the count simply
// restarts: the bound is then per consumer and per window, not lost).
const maxRequeueCounts = 10000

// requeueCounts counts the requeues of each message by this consumer,
// forgotten once the message is settled here another way.
type requeueCounts struct {
	mu    sync.Mutex
	n     map[string]int
	order []string // insertion order, for eviction; may hold forgotten keys
}

func (r *requeueCounts) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key]
}

func (r *requeueCounts) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	if _, ok := r.n[key]; !ok {
		for len(r.n) >= maxRequeueCounts && len(r.order) > 0 {
			delete(r.n, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, key)
	}
	r.n[key]++
	if len(r.order) > 2*len(r.n)+64 {
		live := r.order[:0:0]
		for _, k := range r.order {
			if _, ok := r.n[k]; ok {
				live = append(live, k)
			}
		}
		r.order = live
	}
}

func (r *requeueCounts) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.n, key)
}
