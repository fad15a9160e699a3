package runtime

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/consume"
)

// The test hooks below set fields of consume.Config that no exported option
// sets: production code only reads them (zero is the default).

// WithRegistryWaitsForTest sets a consumer's registry hold bounds (first
// wait, longest wait, longest hold before the delivery is nacked back), so
// a test need not wait ten minutes.
func WithRegistryWaitsForTest(min, max, hold time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.RegistryWaits = consume.RegistryWaits{Min: min, Max: max, Hold: hold} })
}

// WithAckDelayForTest sets how long a settled delivery waits for its
// batch's ack, so a test can see what only Close or a full batch acks.
func WithAckDelayForTest(d time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.AckDelay = d })
}

// WithCopyGateForTest holds every set-aside copy's outcome (the ack of its
// original) until the channel is closed, as a late confirm would.
func WithCopyGateForTest(gate <-chan struct{}) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.CopyGate = gate })
}

// WithAckSlackWaitForTest sets how long settled deliveries wait in the
// ack slack behind a copy, and calls sent with every basic.ack the
// consumer sends (its tag, and whether it is multiple).
func WithAckSlackWaitForTest(wait time.Duration, sent func(tag uint64, multiple bool)) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.AckSlackWait, c.AckSent = wait, sent })
}

// WithRungProbeForTest sets how long a rung found missing is taken as
// missing before a wait tries it again.
func WithRungProbeForTest(d time.Duration) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.RungProbe = d })
}

// WithDecodeAheadHookForTest calls hook with the message id of each
// delivery the consumer decodes ahead of its handler.
func WithDecodeAheadHookForTest(hook func(id string)) ConsumeOption {
	return consumeOptionFunc(func(c *consume.Config) { c.DecodedAhead = hook })
}

// DecodeAheadForTest is how many deliveries a consumer of concurrency 1
// decodes at most ahead of its handler.
const DecodeAheadForTest = consume.DecodeAhead

// SessionForTest is the consumer's current channel and the connection it
// is on, so a test can tell a kept channel from a new one.
func (cs *Consumer) SessionForTest() (ch, conn any) {
	c, n := cs.e.Session()
	if c == nil {
		return nil, nil
	}
	return c, n
}

// AMQPForTest is the connection's live amqp connection (nil when none).
func (c *Connection) AMQPForTest() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// ClosingForTest reports whether Close has begun: from then on no handler
// starts.
func (cs *Consumer) ClosingForTest() bool { return cs.e.Closing() }

// StoppedForTest reports whether the consumer's subscription has ended
// (after Close's basic.cancel was answered): no delivery comes any more.
func (cs *Consumer) StoppedForTest() bool {
	select {
	case <-cs.e.Done():
		return true
	default:
		return false
	}
}

// WithoutHeaderFilterForTest dials without the header filter, so that a
// header table amqp091-go cannot read closes the connection as it would
// under amqps (where the filter cannot read the frames).
func WithoutHeaderFilterForTest() DialOption {
	return dialOptionFunc(func(c *dialConfig) { c.noHeaderFilter = true })
}
