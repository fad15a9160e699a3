package pgstore

import (
	"context"

	"github.com/acemq/acemq-go/runtime"
)

// outcome is what publishing a batch came to.
type outcome struct {
	confirmed   []int64
	refused     []refusal
	unavailable error // the first error of an unavailable broker: the rest of the batch waits
}

// flight is a row written and not settled.
type flight struct {
	i int
	p *runtime.Pending
}

// batchRun publishes one batch: the rows without a key and the first row
// of each key at once, each later row of a key once its predecessor is
// confirmed.
type batchRun struct {
	r       *Relay
	ctx     context.Context
	rows    []outboxRow
	waiting map[string][]int // a key's rows after its one in flight
	// blocked are the keys one of whose rows was refused: their later
	// rows in the batch are not sent (they wait behind it, in the table).
	blocked  map[string]bool
	inflight []flight
	out      outcome
}

// start sends the rows that go out at once; settle sends the rest and
// waits for every confirm.
func (r *Relay) start(ctx context.Context, rows []outboxRow) *batchRun {
	b := &batchRun{r: r, ctx: ctx, rows: rows, waiting: map[string][]int{}, blocked: map[string]bool{}}
	for i, rw := range rows {
		if rw.key != nil {
			if b.blocked[*rw.key] {
				// Its key's earlier row was refused at once (a row
				// Publish would refuse, its exchange missing).
				continue
			}
			if q, ok := b.waiting[*rw.key]; ok {
				b.waiting[*rw.key] = append(q, i)
				continue
			}
			b.waiting[*rw.key] = nil
		}
		b.send(i)
	}
	return b
}

// send writes row i, unless the broker is known to be unavailable.
func (b *batchRun) send(i int) {
	rw := b.rows[i]
	if b.out.unavailable != nil {
		return
	}
	if rw.bad != nil {
		b.refuseUnreadable(i, rw.bad)
		return
	}
	p, err := b.r.ob.c.PublishOutgoing(b.ctx, rw.o)
	switch {
	case err == nil:
		b.inflight = append(b.inflight, flight{i, p})
	case refused(err):
		b.refuse(i, err)
	default:
		b.out.unavailable = err
	}
}

// settle waits for each row in flight, oldest first, and sends the next
// row of a key whose row was confirmed.
func (b *batchRun) settle() {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), settleTimeout)
	defer cancel()
	for len(b.inflight) > 0 {
		f := b.inflight[0]
		b.inflight = b.inflight[1:]
		err := f.p.Wait(wctx)
		switch {
		case err == nil:
			b.out.confirmed = append(b.out.confirmed, b.rows[f.i].id)
			if next, ok := b.next(f.i); ok {
				b.send(next)
			}
		case refused(err):
			b.refuse(f.i, err)
		default:
			if b.out.unavailable == nil {
				b.out.unavailable = err
			}
		}
	}
}

// next pops the row waiting behind row i's, if any.
func (b *batchRun) next(i int) (int, bool) {
	k := b.rows[i].key
	if k == nil || len(b.waiting[*k]) == 0 {
		return 0, false
	}
	q := b.waiting[*k]
	b.waiting[*k] = q[1:]
	return q[0], true
}

// refuse records row i as refused; the rest of its key waits for the
// next batch (behind it, in the table).
func (b *batchRun) refuse(i int, err error) {
	b.refused(i, refusal{err: err})
}

// refuseUnreadable records row i, whose headers could not be read back,
// as refused.
func (b *batchRun) refuseUnreadable(i int, err error) {
	b.refused(i, refusal{err: err, unreadable: true})
}

func (b *batchRun) refused(i int, f refusal) {
	rw := b.rows[i]
	f.id, f.attempts = rw.id, rw.attempts
	b.out.refused = append(b.out.refused, f)
	if rw.key != nil {
		delete(b.waiting, *rw.key)
		b.blocked[*rw.key] = true
	}
}
