package consume

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Copies sent within copyBoundRenew of each other share one deadline, at
// most SetAsideTimeout after each of them; a later one gets the next.
func TestCopyBoundIsSharedAndWithinTheTimeout(t *testing.T) {
	var b copyBounds
	t0 := time.Now()
	first := b.bound(t0)
	if got := b.bound(t0.Add(copyBoundRenew - time.Millisecond)); got != first {
		t.Fatal("a copy sent within copyBoundRenew got a bound of its own")
	}
	dl, ok := first.Deadline()
	if !ok || dl.After(t0.Add(SetAsideTimeout)) || dl.Before(t0.Add(SetAsideTimeout-copyBoundRenew)) {
		t.Fatalf("deadline %v after the first copy, want within (%v, %v]", dl.Sub(t0), SetAsideTimeout-copyBoundRenew, SetAsideTimeout)
	}
	later := b.bound(t0.Add(copyBoundRenew))
	if later == first {
		t.Fatal("a copy sent copyBoundRenew later shares the old bound")
	}
	if dl2, _ := later.Deadline(); dl2.Sub(t0.Add(copyBoundRenew)) > SetAsideTimeout {
		t.Fatalf("the later copy's deadline is %v away, above %v", dl2.Sub(t0.Add(copyBoundRenew)), SetAsideTimeout)
	}
	b.release()
	if first.Err() != nil {
		t.Fatal("release ended an earlier bound (its copies may still wait on it)")
	}
	if later.Err() == nil {
		t.Fatal("release left the current bound running")
	}
}

// A copy's outcome is taken once: the broker's when it comes before the
// bound ends (the bound's AfterFunc stopped), else the bound's, an error
// wrapping the bound's (context.DeadlineExceeded), worded as Pending.Wait's; the copy is counted
// until then returns.
func TestCopyOutcomeIsTakenOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confirm bool
	}{{"confirmed first", true}, {"bound first", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &Consumer{}
			bound, end := context.WithCancel(context.Background())
			defer end()
			var calls atomic.Int32
			got := make(chan error, 2)
			o := &copyOutcome{cs: cs, queue: "orders.retry.1s", bound: bound, to: copyFunc(func(err error) { calls.Add(1); got <- err })}
			cs.copies.add()
			o.stop = context.AfterFunc(bound, o.timedOut)
			if tc.confirm {
				o.published(nil)
				end() // the stopped AfterFunc does not run
			} else {
				end()
				time.Sleep(10 * time.Millisecond) // the AfterFunc's goroutine
				o.published(nil)                  // the broker's, too late
			}
			err := <-got
			time.Sleep(10 * time.Millisecond)
			if n := calls.Load(); n != 1 {
				t.Fatalf("then called %d times", n)
			}
			if cs.copies.pending() != 0 {
				t.Fatalf("%d copies still counted", cs.copies.pending())
			}
			switch {
			case tc.confirm && err != nil:
				t.Fatalf("confirmed copy: %v", err)
			case !tc.confirm && (!errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for the broker's confirm") || !strings.Contains(err.Error(), "orders.retry.1s")):
				t.Fatalf("timed-out copy: %v", err)
			}
		})
	}
}

// copyFunc takes a copy's outcome with a func.
type copyFunc func(error)

func (f copyFunc) copied(err error) { f(err) }

// A copy whose broker outcome has arrived (its publisher queued it for its
// drainer) is not taken by its bound's end: it waits for the drainer, and
// is counted until then.
func TestCopyOutcomeArrivedOutlivesTheBound(t *testing.T) {
	cs := &Consumer{}
	bound, end := context.WithCancel(context.Background())
	defer end()
	got := make(chan error, 2)
	o := &copyOutcome{cs: cs, queue: "orders.retry.1s", bound: bound, to: copyFunc(func(err error) { got <- err })}
	cs.copies.add()
	o.stop = context.AfterFunc(bound, o.timedOut)
	o.arrived.Store(true) // the publisher's settle
	end()
	time.Sleep(20 * time.Millisecond) // the AfterFunc's goroutine
	select {
	case err := <-got:
		t.Fatalf("the bound took an outcome that had arrived: %v", err)
	default:
	}
	if n := cs.copies.pending(); n != 1 {
		t.Fatalf("%d copies counted before the drainer's outcome, want 1", n)
	}
	o.published(nil) // the drainer
	if err := <-got; err != nil {
		t.Fatalf("outcome %v, want the broker's confirm", err)
	}
	if n := cs.copies.pending(); n != 0 {
		t.Fatalf("%d copies still counted", n)
	}
}
