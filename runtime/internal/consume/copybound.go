package consume

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
)

// A copy (setaside.go) is published and waited for within SetAsideTimeout,
// without a goroutine or a timer of its own: its outcome comes from the
// publisher's drainer (publishThen), and its bound is a deadline shared by
// the copies a consumer sends within copyBoundRenew of each other (one
// timer a second, not one a copy; bench/NOTES.md, "A retried
// delivery's cost"). A copy's wait for the broker's outcome is therefore
// bounded by between SetAsideTimeout-copyBoundRenew and SetAsideTimeout
// from its write. An outcome that has arrived is not timed out while it
// waits for the drainer, behind others carried out there (acks, logs,
// metrics): it is the broker's, and a confirmed copy taken as failed
// would be published again, a duplicate.

// copyBoundRenew is how long one shared deadline serves new copies.
const copyBoundRenew = time.Second

// copyBounds hands out the shared deadline of a consumer's copies.
type copyBounds struct {
	mu      sync.Mutex
	ctx     context.Context // nil before the first copy
	renewAt time.Time
	// end ends ctx before its deadline (release); an earlier bound is ended
	// by its deadline, its copies settled by then.
	end context.CancelFunc
}

// bound is the deadline context for a copy sent now: at most
// SetAsideTimeout away.
func (b *copyBounds) bound(now time.Time) context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil || !now.Before(b.renewAt) {
		b.ctx, b.end = context.WithDeadline(context.Background(), now.Add(SetAsideTimeout))
		b.renewAt = now.Add(copyBoundRenew)
	}
	return b.ctx
}

// release ends the bound now (its timer stopped) once no copy waits on it.
func (b *copyBounds) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.end != nil {
		b.end()
		b.ctx, b.end = nil, nil
	}
}

// copyCtx is the context a copy is published with: the values of the one
// that decided it (its process span, the parent of the copy's producer
// span), not its cancellation, and the deadline of a shared bound.
type copyCtx struct {
	context.Context                 // the bound: Deadline, Done, Err
	values          context.Context // without its cancellation
}

func (c copyCtx) Value(key any) any { return c.values.Value(key) }

// AfterFunc lets a context derived from c follow the bound without a
// goroutine of its own (context.AfterFunc).
func (c copyCtx) AfterFunc(f func()) func() bool { return context.AfterFunc(c.Context, f) }

// copyOutcome is one copy's outcome, taken once: from the broker (its
// confirm, its return, the channel's loss) or from the copy's bound.
type copyOutcome struct {
	cs    *Consumer
	queue string // where the copy goes
	bound context.Context
	ctx   copyCtx // what the copy is published with
	once  sync.Once
	stop  func() bool // the bound's AfterFunc; set before the copy is written
	to    copyTaker
	// arrived is marked by the publisher once the broker's outcome is known
	// (inflight.arrived): the bound's end no longer takes the copy.
	arrived atomic.Bool
}

// copyTaker carries out a copy's outcome (a heldRetry).
type copyTaker interface{ copied(err error) }

// published takes the broker's outcome, unless the bound ended first.
func (o *copyOutcome) published(err error) {
	o.once.Do(func() {
		o.stop()
		o.carryOut(err)
	})
}

// timedOut takes the bound's end, unless the broker's outcome came first:
// the error Pending.Wait returns when its ctx ends.
func (o *copyOutcome) timedOut() {
	if o.arrived.Load() {
		return // the broker's outcome waits for the drainer: published takes it
	}
	o.once.Do(func() {
		o.carryOut(errors.Join(&amqpx.PublishError{RoutingKey: o.queue,
			Err: fmt.Errorf("waiting for the broker's confirm: %w", o.bound.Err())}))
	})
}

// carryOut hands o.to the copy's outcome, behind the test's gate
// when there is one (WithCopyGateForTest), and stops counting the copy.
func (o *copyOutcome) carryOut(err error) {
	cs := o.cs
	if g := cs.cfg.CopyGate; g != nil {
		go func() {
			defer cs.copies.done()
			<-g
			o.to.copied(err)
		}()
		return
	}
	defer cs.copies.done()
	o.to.copied(err)
}
