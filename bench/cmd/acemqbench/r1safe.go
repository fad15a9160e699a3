package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// rawRetryingSafe is R1's retries by hand on raw amqp091-go under the
// contract's rule 1, as R1-raw's are without it: a failing delivery's copy
// goes to the 1 s rung in confirm mode, and the original is acked only
// once the broker confirmed the copy. The deliveries settled behind an
// unconfirmed copy wait for it, up to ackSlack of them (as the runtime's
// default ack slack does); past that each is acked alone. So it is the
// same broker work as the runtime's (confirms, single acks behind a slow
// confirm) with none of its client code: the bound on R1 for a library
// that keeps rule 1 (bench/NOTES.md, "R1-safe-raw").
func rawRetryingSafe(failPct int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		failing, err := rawRetryFill(ctx, e, n, failPct)
		if err != nil {
			return 0, 0, err
		}
		out, ch, err := e.r1Channels(true) // the copies confirmed
		if err != nil {
			return 0, 0, err
		}
		defer out.Close()
		defer ch.Close()
		healthy := n - failing
		a := &safeAcker{ch: ch}
		start := e.clockStart()
		ds, err := ch.ConsumeWithContext(ctx, queueR1, "acemqbench-raw-r1-safe", false, false, false, false, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("raw consume %s: %w", queueR1, err)
		}
		defer func() { _ = ch.Cancel("acemqbench-raw-r1-safe", false) }()
		for seen := 0; seen < healthy; {
			var d amqp.Delivery
			select {
			case d = <-ds:
			case <-a.front():
				if err := a.ackConfirmed(); err != nil {
					return 0, 0, err
				}
				continue
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("raw consume %s: %d of %d healthy: %w", queueR1, seen, healthy, ctx.Err())
			}
			attempt, _ := d.Headers[attemptHeader].(int32)
			_, fail := d.Headers[failHeader]
			if fail && attempt < 2 {
				copyOf := amqp.Publishing{Headers: amqp.Table{failHeader: true, attemptHeader: attempt + 1},
					ContentType: d.ContentType, DeliveryMode: amqp.Persistent, MessageId: d.MessageId, Type: d.Type, Body: d.Body}
				dc, err := out.PublishWithDeferredConfirmWithContext(ctx, "", wire.RungQueue(queueR1, time.Second), false, false, copyOf)
				if err != nil {
					return 0, 0, err
				}
				a.copied(d.DeliveryTag, dc)
			} else {
				if !fail {
					seen++
				}
				if err := a.settled(d.DeliveryTag); err != nil {
					return 0, 0, err
				}
			}
			if err := a.ackConfirmed(); err != nil {
				return 0, 0, err
			}
		}
		if err := a.finish(ctx); err != nil {
			return 0, 0, err
		}
		return time.Since(start), healthy, nil
	}
}

// ackSlack is how many settled deliveries wait behind an unconfirmed copy
// before the next is acked alone (the runtime's default, min(prefetch, 64)).
const ackSlack = 64

// safeAcker acks a raw consumer's deliveries under rule 1: never a
// delivery whose copy the broker has not confirmed, by a multiple ack
// either. held are settled deliveries not acked yet, ascending; pending
// the copies not confirmed yet, oldest first.
type safeAcker struct {
	ch      *amqp.Channel
	held    []uint64
	pending []copyWait
}

type copyWait struct {
	tag uint64
	dc  *amqp.DeferredConfirmation
}

// front is closed once the oldest pending copy's outcome is in (nil, which
// blocks, when none is pending).
func (a *safeAcker) front() <-chan struct{} {
	if len(a.pending) == 0 {
		return nil
	}
	return a.pending[0].dc.Done()
}

func (a *safeAcker) copied(tag uint64, dc *amqp.DeferredConfirmation) {
	a.pending = append(a.pending, copyWait{tag, dc})
}

// settled takes a delivery that needs no copy: acked with the next
// multiple ack, or alone when ackSlack deliveries wait behind a copy.
func (a *safeAcker) settled(tag uint64) error {
	if len(a.pending) == 0 {
		a.held = append(a.held, tag)
		if len(a.held) >= ackSlack {
			return a.ackUpTo(tag + 1)
		}
		return nil
	}
	behind := len(a.held) - a.below(a.pending[0].tag)
	if behind >= ackSlack {
		return a.ch.Ack(tag, false)
	}
	a.held = append(a.held, tag)
	return nil
}

// ackConfirmed settles the originals whose copies the broker confirmed,
// oldest first, and acks what no unconfirmed copy is below.
func (a *safeAcker) ackConfirmed() error {
	moved := false
	for len(a.pending) > 0 {
		select {
		case <-a.pending[0].dc.Done():
		default:
			return a.ackBelowPending(moved)
		}
		if !a.pending[0].dc.Acked() {
			return errors.New("raw R1: the broker nacked a copy")
		}
		tag := a.pending[0].tag
		i, _ := slices.BinarySearch(a.held, tag)
		a.held = slices.Insert(a.held, i, tag)
		a.pending = a.pending[1:]
		moved = true
	}
	return a.ackBelowPending(moved)
}

func (a *safeAcker) ackBelowPending(moved bool) error {
	if !moved {
		return nil
	}
	if len(a.pending) == 0 {
		return a.ackUpTo(^uint64(0))
	}
	return a.ackUpTo(a.pending[0].tag)
}

// ackUpTo acks, by one multiple ack, the held deliveries below limit.
func (a *safeAcker) ackUpTo(limit uint64) error {
	i := a.below(limit)
	if i == 0 {
		return nil
	}
	err := a.ch.Ack(a.held[i-1], true)
	a.held = a.held[i:]
	return err
}

// below is how many held deliveries have a tag below limit.
func (a *safeAcker) below(limit uint64) int {
	i, _ := slices.BinarySearch(a.held, limit)
	return i
}

// finish waits for every pending copy's confirm and acks the rest.
func (a *safeAcker) finish(ctx context.Context) error {
	for _, p := range a.pending {
		if ok, err := p.dc.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("raw R1: a copy's confirm %v, %v", ok, err)
		}
	}
	if err := a.ackConfirmed(); err != nil {
		return err
	}
	return a.ackUpTo(^uint64(0))
}
