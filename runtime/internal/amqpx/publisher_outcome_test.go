package amqpx

import (
	"context"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A synchronous publish waits once, on its done, for its outcome: a failed
// or skipped write arrives there as a confirm does (there is no separate
// wait for the write), and a caller whose ctx ends says which wait it gave
// up. The publisher here has no channel and no writer: the message stays
// queued until the publisher fails.
func TestSyncPublishWaitsOnceForItsOutcome(t *testing.T) {
	p := &Publisher{space: make(chan struct{}, writeQueue), kick: make(chan struct{}, 1), quit: make(chan struct{}),
		freed: make(chan struct{}, 1), pending: map[uint64]*Inflight{}, byKey: map[ReturnKey][]uint64{}}
	f, err := p.Queue(context.Background(), "ex", "key", true, amqp.Publishing{MessageId: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	err = f.AwaitOutcome(ended)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the write did not finish") {
		t.Errorf("ctx ended before the write: %v, want the write's wait named, wrapping context.Canceled", err)
	}
	f.written.Store(true)
	err = f.AwaitOutcome(ended)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for the broker's confirm") {
		t.Errorf("ctx ended after the write: %v, want the confirm's wait named, wrapping context.Canceled", err)
	}
	lost := errors.New("channel lost")
	p.Fail(lost)
	if err := f.AwaitOutcome(context.Background()); !errors.Is(err, lost) {
		t.Errorf("outcome after the channel failed with the message queued: %v, want %v", err, lost)
	}
	if _, err := p.Queue(context.Background(), "ex", "key", true, amqp.Publishing{MessageId: "m2"}); !errors.Is(err, lost) {
		t.Errorf("queue on a failed publisher: %v, want %v", err, lost)
	}
}
