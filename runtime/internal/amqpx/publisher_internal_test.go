package amqpx

import (
	"sync/atomic"
	"testing"
)

// The publisher marks an asynchronous outcome arrived before its then is
// queued for the drainer.
func TestSettleMarksTheOutcomeArrived(t *testing.T) {
	p := &Publisher{}
	var arrived atomic.Bool
	seen := make(chan bool, 1)
	p.settle(&Inflight{Arrived: &arrived, Then: func(error) { seen <- arrived.Load() }}, nil)
	if !<-seen {
		t.Fatal("then ran with the outcome not marked arrived")
	}
}
