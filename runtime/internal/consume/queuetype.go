package consume

import (
	"sync"
	"time"
)

// The broker's x-delivery-count counts a quorum queue's returns; on a
// classic queue it is whatever the producer wrote (RabbitMQ passes a
// classic queue's headers through untouched), so a forged 0 would make a
// requeue loop or a crash loop endless. The runtime trusts the header only
// on a queue it knows is quorum: one this Connection declared as quorum
// (Declare, or the rungs of QuorumRungs). A declare with
// x-queue-type: quorum that succeeds proves the queue is quorum (the
// broker checks the argument against the queue's). A consumer whose spec
// says its queue is quorum (ConsumerSpec.Quorum, from the manifest) reads
// the header on a redelivery for its requeue count too, with its own count
// as a floor (quorumSaid). Every other queue is counted by the runtime
// itself: its own count of requeues, the x-acemq-redeliveries it stamps.

// QuorumQueues is the set of queues a Connection knows are quorum.
type QuorumQueues struct {
	mu    sync.RWMutex
	names map[string]bool
}

// Note records a queue declared with x-queue-type: quorum.
func (k *QuorumQueues) Note(queue string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.names == nil {
		k.names = map[string]bool{}
	}
	k.names[queue] = true
}

// Has reports whether queue is known to be quorum.
func (k *QuorumQueues) Has(queue string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.names[queue]
}

// brokerCounts reports whether the broker's x-delivery-count of dv is the
// quorum queue's own count: dv's queue is known to be quorum and dv was
// redelivered (on its first delivery RabbitMQ 4.3 passes a producer's
// x-delivery-count through; once it has counted a return it writes its
// own).
func (dv *delivery) brokerCounts() bool {
	return dv.d.Redelivered && dv.cs.cfg.Quorum.Has(dv.cs.queue)
}

// quorumSaid reports a redelivery of a queue the consumer's spec says is
// quorum (ConsumerSpec.Quorum) but this Connection did not declare: its
// x-delivery-count is the broker's if the spec is right. A requeue count
// read on its word keeps the consumer's own count as a floor, so a
// classic queue said to be quorum, whose header a producer forged, still
// ends within the policy's attempts per consumer.
func (dv *delivery) quorumSaid() bool {
	return dv.d.Redelivered && dv.cs.quorum
}

// NativeQueues are the NativeRetry queues a Connection declared, each with
// the broker's min and max delay.
type NativeQueues struct {
	mu    sync.RWMutex
	delay map[string][2]time.Duration
}

func (k *NativeQueues) Note(queue string, lo, hi time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.delay == nil {
		k.delay = map[string][2]time.Duration{}
	}
	k.delay[queue] = [2]time.Duration{lo, hi}
}

// Wait is how long the broker holds a delivery of queue rejected after
// count earlier returns: min(min × (count+1), max); false for a queue not
// declared NativeRetry here.
func (k *NativeQueues) Wait(queue string, count int64) (time.Duration, bool) {
	k.mu.RLock()
	d, ok := k.delay[queue]
	k.mu.RUnlock()
	if !ok {
		return 0, false
	}
	lo, hi := d[0], d[1]
	if n := max(count, 0) + 1; lo > 0 && n <= int64(hi/lo) {
		return lo * time.Duration(n), true
	}
	return hi, true
}
